//! The evaluation's texts in scripts other than English: man pages and extracted HTML
//! pages, their all-pairs counts and their short pages from one template.

use std::path::Path;

use crawldedup::index::Confirm;

use super::edits::{recall, templated_pages};
use super::{Doc, LONG_CHARS, all_pairs, files_under};

/// Man pages (gzip or plain roff) under `dir`, as prose: request lines dropped, font and
/// escape sequences removed.
pub fn load_man(dir: &Path) -> Vec<Doc> {
    let files = files_under(dir, |_| true);
    let escape = regex::Regex::new(r"\\f[A-Z1-4P]|\\\(..|\\[-&e|^ ]|\\s[-+]?\d").expect("regex");
    let mut docs = Vec::new();
    for path in files {
        let Ok(raw) = std::fs::read(&path) else {
            continue;
        };
        let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            use std::io::Read;
            if flate2::read::GzDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .is_err()
            {
                continue;
            }
            out
        } else {
            raw
        };
        let Ok(roff) = String::from_utf8(bytes) else {
            continue;
        };
        if roff.starts_with(".so ") {
            continue; // a link to another page
        }
        let text: String = roff
            .lines()
            .filter(|l| !l.starts_with('.') && !l.starts_with('\''))
            .map(|l| escape.replace_all(l, "").into_owned())
            .collect::<Vec<_>>()
            .join("\n");
        docs.push(Doc {
            host: path.display().to_string(),
            text,
        });
    }
    docs
}

/// [`templated_short_pages`] in Chinese, Japanese or Korean (by the folder's name in
/// `label`): the same three kinds of page, each name eight characters of the prose (three
/// of its spaced phrases in Korean).
fn templated_unspaced_pages(label: &str, prose: &[String], policy: &Confirm) {
    if label.contains("/ko") {
        let templates = [
            "{name}\n\n{price}원\n\n재고 있음. 영업일 기준 이틀 안에 발송합니다. 모든 주문은 30일 동안 무료로 반품할 수 있고, 모든 상품은 2년 동안 보증됩니다.",
            "{name} - {price}포인트\n\n커뮤니티 회원이 올린 글입니다. 답글을 달거나 이 글을 팔로우하려면 로그인하세요. 누군가 답하면 메일로 알려 드립니다.",
            "행사: {name}\n\n입장권은 {price}달러부터. 입장은 일곱 시, 공연은 여덟 시에 시작합니다. 18세 이상. 구매 후에는 환불되지 않습니다.",
        ];
        let phrases: Vec<&str> = prose.iter().flat_map(|t| t.split_whitespace()).collect();
        templated_pages(label, &templates, policy, |rng| {
            (0..3)
                .map(|_| phrases[rng.below(phrases.len())])
                .collect::<Vec<_>>()
                .join(" ")
        });
        return;
    }
    let templates: &[&str] = if label.contains("ja") {
        &[
            "{name}\n\n{price}円\n\n在庫あり。二営業日以内に発送します。全商品三十日間返品無料、二年間の保証付きです。",
            "{name} - {price}ポイント\n\nコミュニティのメンバーによる投稿。返信やフォローにはログインしてください。回答があるとメールでお知らせします。",
            "イベント：{name}\n\nチケットは{price}円から。開場は七時、開演は八時です。十八歳以上。購入後の払い戻しはできません。",
        ]
    } else {
        &[
            "{name}\n\n{price}元\n\n有现货。两个工作日内发货。所有订单三十天内免费退货，所有商品保修两年。",
            "{name} - {price}积分\n\n由社区成员发布。登录后即可回复或关注此帖，有人回答时会收到邮件通知。",
            "活动：{name}\n\n门票{price}元起。七点开门，八点开演。十八岁以上。购票后恕不退款。",
        ]
    };
    let chars: Vec<Vec<char>> = prose
        .iter()
        .map(|t| {
            t.chars()
                .filter(|&c| !c.is_whitespace())
                .collect::<Vec<char>>()
        })
        .filter(|c| c.len() > 8)
        .collect();
    templated_pages(label, templates, policy, |rng| {
        let text = &chars[rng.below(chars.len())];
        let at = rng.below(text.len() - 8);
        text[at..at + 8].iter().collect()
    });
}

/// The all-pairs counts on texts of a script written without spaces, or of one whose
/// spaced units are not words (Korean): up to 1,500 long texts, their openings of 300
/// characters and of 60.
pub fn unspaced_pairs(label: &str, texts: Vec<String>, policy: &Confirm) {
    let sample: Vec<String> = texts
        .into_iter()
        .filter(|t| t.chars().count() >= LONG_CHARS)
        .take(1500)
        .collect();
    all_pairs(&format!("long {label}"), &sample, policy);
    // Their first 300 characters: about 80 words of Chinese or Japanese, under the size
    // rule's 500 characters of English, so long texts to the decision.
    let openings: Vec<String> = sample
        .iter()
        .map(|t| t.chars().take(300).collect::<String>())
        .collect();
    all_pairs(
        &format!("openings of 300 characters of {label}"),
        &openings,
        policy,
    );
    // Their first 60 characters: about 35 words, tiny to the rule as 35 words of English
    // are, compared on their exact shingle sets.
    let briefs: Vec<String> = sample
        .iter()
        .map(|t| t.chars().take(60).collect::<String>())
        .collect();
    all_pairs(
        &format!("openings of 60 characters of {label}"),
        &briefs,
        policy,
    );
    templated_unspaced_pages(&format!(" ({label})"), &sample, policy);
    if label.contains("/ko") {
        // Korean spaces its phrases: edited copies as for English, a phrase the word a
        // replacement changes, the replacements phrases of the same texts.
        let vocab: Vec<String> = sample
            .iter()
            .flat_map(|t| t.split_whitespace().take(50))
            .filter(|w| w.chars().count() > 1)
            .map(str::to_string)
            .collect();
        recall(&format!("long {label}"), &sample, true, &vocab, policy);
        recall(
            &format!("openings of 300 characters of {label}"),
            &openings,
            false,
            &vocab,
            policy,
        );
    }
}

/// The main texts of the `.html` pages under `dir` (a site Debian installs, such as
/// /usr/share/libreoffice/help/ko from libreoffice-help-ko), as the extractor finds them,
/// each distinct text once, in file order.
pub fn load_html(dir: &Path) -> Vec<String> {
    let files = files_under(dir, |p| p.extension().is_some_and(|x| x == "html"));
    let mut seen = std::collections::HashSet::new();
    files
        .iter()
        .filter_map(|f| std::fs::read(f).ok())
        .map(|bytes| crawldedup::content::extract_bytes(&bytes, None, None).text)
        .filter(|text| seen.insert(text.clone()))
        .collect()
}
