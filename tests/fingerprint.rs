//! Fingerprints are a stored format: these values must not change without a new
//! `FINGERPRINT_VERSION`.

use crawldedup::Fingerprint;
use crawldedup::fingerprint::FINGERPRINT_VERSION;

const ENGLISH: &str = "The city council approved the new budget on Tuesday after a long debate. \
    Funding for parks and libraries rises by four percent, while road repairs get a one-time grant.";
const CHINESE: &str = "市议会周二经过长时间辩论后批准了新预算。公园和图书馆的经费增加百分之四，道路维修获得一次性拨款。";
const MIXED: &str =
    "東京 Tokyo: the café’s menu — ラーメン, 寿司 & don't miss the 抹茶 ice cream (¥500).";

#[test]
fn golden_fingerprints_are_stable() {
    assert_eq!(FINGERPRINT_VERSION, 2);
    let got: Vec<String> = [ENGLISH, CHINESE, MIXED]
        .iter()
        .map(|t| {
            let f = Fingerprint::of(t);
            format!("{} {} {}", f.simhash, f.digest, f.tokens)
        })
        .collect();
    assert_eq!(
        got,
        [
            "822595b5cf2d396c c9eeb5636e11d8fa5904b6da0af910f5 30",
            "df065ec805680b9c 02375fdf8ecf19a585fb0c1c1deb1f37 42",
            "46621a6cff5f2c56 dfb22b5a7b8deb2d1cf3a96abb29f156 16",
        ]
    );
}

#[test]
fn small_edits_stay_close_and_different_texts_do_not() {
    let a = Fingerprint::of(ENGLISH).simhash;
    let edited = ENGLISH.replace("Tuesday", "Wednesday");
    let b = Fingerprint::of(&edited).simhash;
    let other = Fingerprint::of(
        "Our engineers replaced the storage layer this spring; queries now finish in half the time \
         and backups run every hour instead of every night.",
    )
    .simhash;
    assert!(a.distance(b) <= 8, "edit moved {} bits", a.distance(b));
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
