//! The seen-URL filter's promises: its false-positive rate, its bound past n, exact
//! confirmation, atomic check-and-insert, and a saved form that another process reads
//! identically and that refuses damage.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use crawldedup::urls::seen::{SEEN_FILE, url_hash};
use crawldedup::{BloomParams, SeenConfig, SeenError, SeenUrls};
use fastbloom::BloomFilter;

fn member(i: u64) -> String {
    format!("https://site{}.example.com/page/{i}", i % 97)
}

fn stranger(i: u64) -> String {
    format!("https://other{}.example.org/item?id={i}", i % 89)
}

fn measured_fp(seen: &SeenUrls, probes: u64) -> f64 {
    let hits = (0..probes)
        .filter(|&i| seen.contains(&stranger(i)).unwrap())
        .count();
    hits as f64 / probes as f64
}

#[test]
fn single_filter_rate_at_n_is_within_15_percent_of_p() {
    let (n, p) = (200_000u64, 0.01);
    let params = BloomParams::new(n, p).unwrap();
    let mut filter = BloomFilter::with_num_bits(params.m as usize).hashes(params.k);
    for i in 0..n {
        filter.insert_hash(url_hash(&member(i)));
    }
    let probes = 400_000;
    let hits = (0..probes)
        .filter(|&i| filter.contains_hash(url_hash(&stranger(i))))
        .count();
    let rate = hits as f64 / probes as f64;
    assert!((rate - p).abs() <= 0.15 * p, "measured {rate}, p = {p}");
    assert!((params.expected_fp_rate(n) - p).abs() <= 0.01 * p);
}

#[test]
fn scalable_filter_stays_below_p_at_four_times_n() {
    let (n, p) = (50_000u64, 0.01);
    let seen = SeenUrls::new(SeenConfig::new(n, p)).unwrap();
    // URLs that a false positive makes look seen are not counted: they must be few.
    let skipped = (0..4 * n)
        .filter(|&i| !seen.insert(&member(i)).unwrap())
        .count() as u64;
    let stats = seen.stats();
    assert_eq!(stats.count + skipped, 4 * n);
    assert!((skipped as f64) < 4.0 * n as f64 * p, "{skipped} skipped");
    assert!(stats.layers >= 2, "{stats:?}");
    assert!(stats.expected_fp_rate < p, "{stats:?}");
    let rate = measured_fp(&seen, 400_000);
    assert!(rate < p, "measured {rate} at 4n, p = {p}");
    // No false negatives, ever.
    assert!((0..4 * n).all(|i| seen.contains(&member(i)).unwrap()));
}

#[test]
fn confirm_on_disk_never_skips_a_new_url() {
    let dir = tempfile::tempdir().unwrap();
    // A deliberately loose filter, so false positives are plentiful.
    let config = SeenConfig::new(1_000, 0.5);
    let loose = SeenUrls::new(config).unwrap();
    let exact = SeenUrls::open(dir.path(), config.with_confirm_on_disk(true)).unwrap();
    for i in 0..1_000 {
        loose.insert(&member(i)).unwrap();
        exact.insert(&member(i)).unwrap();
    }
    let probes = 5_000;
    let loose_skips = (0..probes)
        .filter(|&i| !loose.insert(&stranger(i)).unwrap())
        .count();
    let exact_skips = (0..probes)
        .filter(|&i| !exact.insert(&stranger(i)).unwrap())
        .count();
    assert!(
        loose_skips > 100,
        "the loose filter should have false positives: {loose_skips}"
    );
    assert_eq!(exact_skips, 0);
    // ... and still recognises every URL it has seen.
    assert!((0..1_000).all(|i| !exact.insert(&member(i)).unwrap()));
    assert!((0..probes).all(|i| !exact.insert(&stranger(i)).unwrap()));
}

#[test]
fn concurrent_inserts_of_one_url_yield_exactly_one_new() {
    let seen = Arc::new(SeenUrls::new(SeenConfig::new(1_000_000, 0.01)).unwrap());
    let urls: Vec<String> = (0..5_000).map(member).collect();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let seen = Arc::clone(&seen);
            let urls = urls.clone();
            std::thread::spawn(move || {
                // Each thread walks the list from a different place so they collide often.
                let start = t * urls.len() / 8;
                (0..urls.len())
                    .map(|i| &urls[(start + i) % urls.len()])
                    .filter(|u| seen.insert(u).unwrap())
                    .map(|u| u.to_string())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut news = Vec::new();
    for t in threads {
        news.extend(t.join().unwrap());
    }
    let distinct: HashSet<_> = news.iter().collect();
    assert_eq!(news.len(), urls.len(), "every URL is new exactly once");
    assert_eq!(distinct.len(), urls.len());
}

const CHILD_ENV: &str = "CRAWLDEDUP_SEEN_CHILD_DIR";

fn answers(seen: &SeenUrls) -> Vec<bool> {
    (0..20_000)
        .map(|i| seen.contains(&member(i)).unwrap())
        .chain((0..20_000).map(|i| seen.contains(&stranger(i)).unwrap()))
        .collect()
}

fn answers_text(answers: &[bool]) -> String {
    answers.iter().map(|&b| if b { '1' } else { '0' }).collect()
}

fn small_config() -> SeenConfig {
    SeenConfig::new(5_000, 0.05)
}

#[test]
fn saved_filter_answers_identically_in_another_process() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        // The child: open what the parent saved and write down every answer.
        let seen = SeenUrls::open(Path::new(&dir), small_config()).unwrap();
        let text = format!(
            "{} {}",
            seen.checkpoint_seq(),
            answers_text(&answers(&seen))
        );
        std::fs::write(Path::new(&dir).join("child-answers"), text).unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let seen = SeenUrls::open(dir.path(), small_config()).unwrap();
    // Past n, so the saved form has more than one layer.
    for i in 0..12_000 {
        seen.insert(&member(i)).unwrap();
    }
    assert!(seen.stats().layers >= 2);
    seen.save(dir.path(), 42).unwrap();
    let expected = format!("42 {}", answers_text(&answers(&seen)));

    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "seen::saved_filter_answers_identically_in_another_process",
        ])
        .env(CHILD_ENV, dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let got = std::fs::read_to_string(dir.path().join("child-answers")).unwrap();
    assert_eq!(got, expected);
}

#[test]
fn bit_layout_is_pinned() {
    // The saved bytes of a fixed filter: if fastbloom or the URL hash changed how bits are
    // placed, every saved filter would answer wrongly, and this checksum would change.
    let dir = tempfile::tempdir().unwrap();
    let seen = SeenUrls::open(dir.path(), small_config()).unwrap();
    for i in 0..1_000 {
        seen.insert(&member(i)).unwrap();
    }
    seen.save(dir.path(), 7).unwrap();
    let bytes = std::fs::read(dir.path().join(SEEN_FILE)).unwrap();
    let digest = xxhash_rust::xxh3::xxh3_64(&bytes);
    // File format 3 (format 2, pinned as 18cb3f7f41508a07, with the state directory's id
    // after the hash seed, 0 here, slices in milliseconds and the interval as set); the
    // bits are those format 1 pinned as 81501b4fd8bbc781.
    assert_eq!(format!("{digest:016x}"), "a9acd3409b97302a");
}

fn saved_bytes(dir: &Path) -> Vec<u8> {
    let seen = SeenUrls::open(dir, small_config()).unwrap();
    for i in 0..1_000 {
        seen.insert(&member(i)).unwrap();
    }
    seen.save(dir, 1).unwrap();
    std::fs::read(dir.join(SEEN_FILE)).unwrap()
}

fn open_error(dir: &Path) -> String {
    match SeenUrls::open(dir, small_config()) {
        Err(e @ SeenError::Corrupt { .. }) => e.to_string(),
        Err(other) => panic!("expected a corruption error, got {other}"),
        Ok(_) => panic!("a damaged filter was accepted"),
    }
}

#[test]
fn truncated_corrupted_or_foreign_files_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = saved_bytes(dir.path());
    let file = dir.path().join(SEEN_FILE);

    for cut in [0, 5, 20, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&file, &bytes[..cut]).unwrap();
        let e = open_error(dir.path());
        assert!(e.contains(SEEN_FILE), "{e}");
        assert!(!e.contains('\n'));
    }

    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x10;
    std::fs::write(&file, &flipped).unwrap();
    assert!(open_error(dir.path()).contains("checksum"));

    std::fs::write(&file, b"<html>not a filter</html>").unwrap();
    assert!(open_error(dir.path()).contains("not a crawldedup"));

    // The intact file still opens.
    std::fs::write(&file, &bytes).unwrap();
    let seen = SeenUrls::open(dir.path(), small_config()).unwrap();
    assert_eq!(seen.checkpoint_seq(), 1);
    assert!((0..1_000).all(|i| seen.contains(&member(i)).unwrap()));
}

#[test]
fn save_leaves_no_temporary_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    saved_bytes(dir.path());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec![SEEN_FILE.to_string()]);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// The journal's promise: a URL recorded as new and synced survives a crash at any point,
/// including between a save's switch to a new journal generation and its rename of the
/// saved filter.
#[test]
fn journaled_urls_survive_a_crash_and_a_save_cut_short() {
    let config = small_config().with_confirm_on_disk(true);
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    let seen = SeenUrls::open_journaled(&live, config).unwrap();
    assert!(seen.insert("http://a.test/").unwrap());
    seen.save(&live, 1).unwrap();
    assert!(seen.insert("http://b.test/").unwrap());
    seen.sync().unwrap();
    // What the state directory held before the next save began.
    let before_save = dir.path().join("before-save");
    copy_dir(&live, &before_save);
    seen.save(&live, 2).unwrap();
    for i in 0..3000 {
        // Past n = 5,000 with the two above and the layer's growth, on the second run.
        assert!(seen.insert(&member(i)).unwrap());
    }
    seen.sync().unwrap();
    drop(seen);

    // The crash: the filter saved at 1 and its generation, with the new generation (2)
    // already begun and written to.
    let crashed = dir.path().join("crashed");
    copy_dir(&before_save, &crashed);
    let generation2 = format!("{}2", crawldedup::urls::journal::JOURNAL_PREFIX);
    std::fs::copy(live.join(&generation2), crashed.join(&generation2)).unwrap();
    for state in [&live, &crashed] {
        let seen = SeenUrls::open_journaled(state, config).unwrap();
        for url in ["http://a.test/", "http://b.test/"]
            .into_iter()
            .map(String::from)
            .chain((0..3000).map(member))
        {
            assert!(!seen.insert(&url).unwrap(), "{url} forgotten in {state:?}");
        }
        assert_eq!(seen.stats().count, 3002, "{state:?}");
        // The next save must not reuse a generation number still on disk.
        assert_eq!(seen.checkpoint_seq(), 2);
    }

    // Opened without the journal (a crawl), the generations are still replayed.
    let seen = SeenUrls::open(&crashed, config).unwrap();
    assert!(seen.contains("http://b.test/").unwrap());
    seen.save(&crashed, 3).unwrap();
    let left: Vec<_> = std::fs::read_dir(&crashed)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|n| n.starts_with(crawldedup::urls::journal::JOURNAL_PREFIX))
        .collect();
    assert!(left.is_empty(), "generations covered by the save: {left:?}");
}
