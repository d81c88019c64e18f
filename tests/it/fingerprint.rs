//! Fingerprints are a stored format: these values must not change without a new
//! `FINGERPRINT_VERSION`.

use crawldedup::Fingerprint;
use crawldedup::fingerprint::FINGERPRINT_VERSION;

const ENGLISH: &str = "The city council approved the new budget on Tuesday after a long debate. \
    Funding for parks and libraries rises by four percent, while road repairs get a one-time grant.";
const CHINESE: &str = "市议会周二经过长时间辩论后批准了新预算。公园和图书馆的经费增加百分之四，道路维修获得一次性拨款。";
/// Korean: phrases spaced, each read a syllable pair at a time (fingerprint version 5).
const KOREAN: &str = "시의회는 화요일에 긴 토론 끝에 새 예산안을 승인했다. 공원과 도서관 예산은 4퍼센트 늘고, 도로 보수에는 일회성 지원금이 배정된다.";
const MIXED: &str =
    "東京 Tokyo: the café’s menu — ラーメン, 寿司 & don't miss the 抹茶 ice cream (¥500).";
/// Repeated shingles, as in a table: pins the weight of a feature seen more than once.
const TABLE: &str = "A1 latin capital letter a with grave. A2 latin capital letter a with acute. \
    A3 latin capital letter a with circumflex. B1 latin small letter a with grave. \
    B2 latin small letter a with acute. B3 latin small letter a with circumflex. \
    C1 latin small letter c with cedilla.";

#[test]
fn golden_fingerprints_are_stable() {
    assert_eq!(FINGERPRINT_VERSION, 5);
    let got: Vec<String> = [ENGLISH, CHINESE, MIXED, TABLE, KOREAN]
        .iter()
        .map(|t| {
            let f = Fingerprint::of(t);
            let sketch: String = f
                .sketch
                .to_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("{} {} {} {}", f.simhash, f.digest, f.tokens, sketch)
        })
        .collect();
    // A sketch's last four bytes are its shingle count; of a text with words written
    // without spaces, the top byte holds how far its tokens outnumber its words
    // (`Sketch::unspaced`, marked by the top bit: 0xaf for the Chinese, 0x81 for the mixed
    // text, 0x93 for the Korean). A sketch stored without it reads as of spaced text, as it
    // was before.
    assert_eq!(
        got,
        [
            "530a89632e82dcd6 c9eeb5636e11d8fa5904b6da0af910f5 30 c0d64fa0207fb813ec0e4903d7ceaf9ba4a5dbeb00b77016acbb83c23532b33c04e3bdbead1734c4ca8dee4d1a60cfdd0d77da2d8745b99c8bfc83f1c68874e40000001c",
            "7508e2635a59001d 02375fdf8ecf19a585fb0c1c1deb1f37 42 6e021f8b20cbd29a6c80940bc0711f758ce7d48cbf2c4e7b5c528e618be04dbfdf45bcb13f5b835d3d31648250b50a6680058f9c7aabc6af7f3677b1f4f68623af000028",
            "320e5707a8a53661 dfb22b5a7b8deb2d1cf3a96abb29f156 16 cff10ad76b2ad41a9472e3059f739a2417d32886c106c0c9eb3f3b9bc24d82e78cf78039b0e9e9ce6d1043f4bd839d5f0b40121d9aeab83cbd4048e2e3cee5308100000e",
            "f7429ddac19b5aca 6b76121620a7bc15043a8b3c46505291 49 e91b8ab57a84e35b38cc3ed5e52946385a255d4d8de92a409e81bfbf3a98d2babdbe29fddb9296f5604f0e215038b52158d6d9d8f8a2f2ec77ba4368bf3ae73d0000001e",
            "da0a879875dad4b1 0ea93b731e5be2fd05905ba2a5d84228 38 3e7384177f9cbada477f025ffd024aaa97d0078a0765a0bd15587e43cd24eab96aab0dfd4c04c964ed42d6178f85232bbb647cb88016ad678290e98763c1a6fe93000024",
        ]
    );
}

const OTHER: &str = "Our engineers replaced the storage layer this spring; queries now finish in \
    half the time and backups run every hour instead of every night.";

#[test]
fn small_edits_stay_alike_and_different_texts_do_not() {
    let a = Fingerprint::of(ENGLISH).simhash;
    let edited = ENGLISH.replace("Tuesday", "Wednesday");
    let other = Fingerprint::of(OTHER).simhash;
    let (sa, sb, so) = (
        Fingerprint::of(ENGLISH).sketch,
        Fingerprint::of(&edited).sketch,
        Fingerprint::of(OTHER).sketch,
    );
    // One word of 30 changes 3 of 28 shingles: resemblance 25 / 31.
    assert!(sa.resemblance(&sb) >= 0.5, "{}", sa.resemblance(&sb));
    assert!(sa.resemblance(&so) < 0.1, "{}", sa.resemblance(&so));
    assert!(
        a.distance(other) > 12,
        "different texts only {} apart",
        a.distance(other)
    );
}

#[test]
fn digest_ignores_layout_but_not_words() {
    let spaced = ENGLISH.replace(' ', "  \n");
    assert_eq!(
        Fingerprint::of(ENGLISH).digest,
        Fingerprint::of(&spaced).digest
    );
    assert_ne!(
        Fingerprint::of(ENGLISH).digest,
        Fingerprint::of(&ENGLISH.replace("four", "five")).digest
    );
}

/// Korean joins a word and its particles or endings in one spaced phrase, so an editor's
/// change of a particle changes a whole phrase. Read a syllable pair at a time, the
/// opening of a Korean article (165 characters, about 60 words) with four particles
/// changed keeps 0.71 of its shingles (exact resemblance); read by its spaces, as
/// fingerprint version 4 read it, 0.57. The whole article so edited is its original's
/// near-duplicate.
#[test]
fn a_korean_copy_with_particles_changed_keeps_its_shingles() {
    let article = include_str!("../fixtures/cjk/ko-4.txt").trim();
    let edit = |text: &str| {
        let mut edited = text.to_string();
        for (from, to) in [
            ("골목에", "골목의"),
            ("가게들이", "가게들은"),
            ("거리는", "거리가"),
            ("구청은", "구청이"),
        ] {
            assert!(edited.contains(from), "{from}");
            edited = edited.replacen(from, to, 1);
        }
        edited
    };
    let opening: String = article.chars().take(165).collect();
    let (a, b) = (
        crawldedup::fingerprint::shingle_set(&opening),
        crawldedup::fingerprint::shingle_set(&edit(&opening)),
    );
    let common = a.iter().filter(|s| b.contains(s)).count();
    let resemblance = common as f64 / (a.len() + b.len() - common) as f64;
    assert!(
        resemblance > 0.7,
        "{resemblance} ({common} of {} and {})",
        a.len(),
        b.len()
    );
    let dir = tempfile::tempdir().unwrap();
    let dedup = crawldedup::Dedup::open(dir.path(), &crawldedup::Config::default()).unwrap();
    let first = dedup.check_text("original", article).unwrap();
    assert!(
        matches!(first, crawldedup::PageVerdict::Unique { .. }),
        "{first:?}"
    );
    match dedup.check_text("edited", &edit(article)).unwrap() {
        crawldedup::PageVerdict::NearDuplicate { of, .. } => assert_eq!(of.name, "original"),
        other => panic!("{other:?}"),
    }
}
