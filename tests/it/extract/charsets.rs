//! Pages encoded in each common charset, with and without a declaration.

use super::*;

const FRENCH: &str = "Le cœur du problème : où sont passées les données ? Déjà réglé, garçon. \
    Les élèves étudient l'été à la bibliothèque près de la forêt, où l'on entend les oiseaux.";
const GERMAN: &str = "Größere Änderungen für Bäcker: Öfen müssen überprüft werden, heißt es. \
    Die Prüfung dauert während der Woche länger, weil viele Betriebe gleichzeitig schließen.";
const CHINESE_SIMPLIFIED: &str = "中华人民共和国是位于东亚的国家，首都是北京。这里有悠久的历史和丰富的文化，\
    许多游客每年都来参观长城和故宫，品尝各地的美食，体验传统节日的热闹气氛。";
const CHINESE_TRADITIONAL: &str = "臺灣是位於東亞的島嶼，擁有豐富的自然景觀與多元的文化。許多旅客會到臺北參觀\
    博物館，品嚐夜市的小吃，並搭乘高速鐵路前往南部，欣賞美麗的海岸與山脈風光。";
const JAPANESE: &str = "日本の首都は東京です。春には桜が咲き、多くの人々が公園で花見を楽しみます。\
    秋には紅葉が美しく、京都の寺院を訪れる観光客がとても多くなります。ありがとうございました。";
const KOREAN: &str = "대한민국의 수도는 서울입니다. 봄에는 벚꽃이 피고 많은 사람들이 공원에서 산책을 \
    즐깁니다. 가을에는 단풍이 아름답고 여러 지역에서 다양한 축제가 열립니다. 감사합니다.";

fn page_in(charset: &str, text: &str, declared: bool) -> Vec<u8> {
    let encoding = encoding_rs::Encoding::for_label(charset.as_bytes()).unwrap();
    let meta = if declared {
        format!("<meta charset=\"{charset}\">")
    } else {
        String::new()
    };
    let html =
        format!("<html><head>{meta}<title>t</title></head><body><p>{text}</p></body></html>");
    let (bytes, _, unmappable) = encoding.encode(&html);
    assert!(!unmappable, "{charset} cannot encode the sample");
    bytes.into_owned()
}

#[test]
fn pages_in_each_charset_decode_with_and_without_a_declaration() {
    let cases = [
        ("utf-8", FRENCH),
        ("windows-1252", FRENCH),
        ("iso-8859-1", GERMAN),
        ("gbk", CHINESE_SIMPLIFIED),
        ("big5", CHINESE_TRADITIONAL),
        ("shift_jis", JAPANESE),
        ("euc-kr", KOREAN),
    ];
    for (charset, text) in cases {
        let expected = encoding_rs::Encoding::for_label(charset.as_bytes()).unwrap();
        for declared in [true, false] {
            let bytes = page_in(charset, text, declared);
            let decoded = decode(&bytes, None, None);
            assert_eq!(
                decoded.encoding,
                expected,
                "{charset} (declared: {declared}) decoded as {}",
                decoded.encoding.name()
            );
            let wanted_source = if declared {
                CharsetSource::Meta
            } else if charset == "utf-8" {
                CharsetSource::ValidUtf8
            } else {
                CharsetSource::Sniffed
            };
            assert_eq!(decoded.source, wanted_source, "{charset} {declared}");
            assert!(!decoded.had_errors);
            let out = extract_bytes(&bytes, None, None);
            assert!(
                out.text.contains(text),
                "{charset} {declared}: {}",
                out.text
            );
        }
    }
}

#[test]
fn header_charset_wins_over_meta_and_bom_wins_over_header() {
    let bytes = page_in("gbk", CHINESE_SIMPLIFIED, false);
    let mut with_wrong_meta = b"<meta charset=\"big5\">".to_vec();
    with_wrong_meta.extend_from_slice(&bytes);
    let decoded = decode(&with_wrong_meta, Some("text/html; charset=GB2312"), None);
    assert_eq!(decoded.source, CharsetSource::Header);
    assert!(decoded.text.contains(CHINESE_SIMPLIFIED));

    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend_from_slice("<p>naïve</p>".as_bytes());
    let decoded = decode(&bom, Some("text/html; charset=windows-1252"), None);
    assert_eq!(decoded.source, CharsetSource::Bom);
    assert_eq!(decoded.text, "<p>naïve</p>");
}

#[test]
fn unknown_labels_are_ignored_and_invalid_bytes_replaced() {
    let decoded = decode(
        b"<p>caf\xc3\xa9 \xff</p>",
        Some("text/html; charset=klingon"),
        None,
    );
    assert_ne!(decoded.source, CharsetSource::Header);
    let decoded = decode(
        b"<p>caf\xc3\xa9 \xc3</p>",
        Some("text/html; charset=utf-8"),
        None,
    );
    assert!(decoded.had_errors);
    assert!(decoded.text.contains('\u{FFFD}'));
}
