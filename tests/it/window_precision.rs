//! Time windows to well under a second: a URL comes due within its recrawl interval plus
//! one slice (interval / generations, rounded up to the millisecond, so at most
//! `generations` milliseconds more in all) for intervals from one second to 90 days; a
//! fingerprint is never forgotten before its retention window, and at most a second after;
//! a filter saved with one interval is refused with another, the message quoting both as
//! set.

use std::sync::Arc;
use std::time::Duration;

use crawldedup::clock::ManualClock;
use crawldedup::index::{Decision, IndexConfig, SimhashIndex};
use crawldedup::{SeenConfig, SeenUrls};

use crate::docs;
use docs::doc;

const T0_MS: u64 = 1_700_000_000_000;

fn recrawl(after: Duration, generations: u32) -> SeenConfig {
    SeenConfig::new(10_000, 0.01).with_expiry(after, generations)
}

#[test]
fn a_url_comes_due_within_its_interval_and_one_slice_from_a_second_to_ninety_days() {
    let day = 86_400_000u64;
    for (interval_ms, generations) in [
        (1_000u64, 8u32),
        (4_000, 8),
        (4_000, 2),
        (7_000, 64),
        (3_600_000, 8),
        (90 * day, 8),
    ] {
        let slice = interval_ms.div_ceil(u64::from(generations));
        // Recorded at several points of a slice: at its start, inside, at its end.
        for offset in [0, 1, 123 % slice, slice / 2, slice - 1] {
            let clock = ManualClock::at(0);
            let recorded = T0_MS / slice * slice + offset;
            clock.set_ms(recorded);
            let seen = SeenUrls::new(recrawl(Duration::from_millis(interval_ms), generations))
                .unwrap()
                .with_clock(Arc::new(clock.clone()));
            let url = "https://example.com/a";
            assert!(seen.insert(url).unwrap());
            let due = seen.due_at_ms(recorded).unwrap();
            let what = format!("{interval_ms} ms in {generations}, recorded at +{offset} ms");
            assert!(
                due >= recorded + interval_ms,
                "{what}: due at +{}",
                due - recorded
            );
            let rounding = u64::from(generations) * slice - interval_ms;
            assert!(rounding < u64::from(generations), "{what}: {rounding} ms");
            assert!(
                due <= recorded + interval_ms + slice + rounding,
                "{what}: due at +{} ms, past one slice ({slice} ms)",
                due - recorded
            );
            // Seen a millisecond before, new at the due time.
            clock.set_ms(due - 1);
            assert!(seen.contains(url).unwrap(), "{what}: forgotten early");
            clock.set_ms(due);
            assert!(!seen.contains(url).unwrap(), "{what}: not due at {due}");
        }
    }
}

#[test]
fn a_filter_saved_with_one_interval_is_refused_with_another_quoting_both() {
    let dir = tempfile::tempdir().unwrap();
    let four = recrawl(Duration::from_secs(4), 8);
    let seen = SeenUrls::open(dir.path(), four).unwrap();
    seen.insert("https://example.com/a").unwrap();
    seen.save(dir.path(), 1).unwrap();
    drop(seen);
    // 4 s and 5 s cut into 8 slices differ by 125 ms a slice; 4 s and 4.001 s by less than
    // a millisecond a slice, and are refused all the same.
    for other in [Duration::from_secs(5), Duration::from_millis(4_001)] {
        let e = SeenUrls::open(dir.path(), recrawl(other, 8))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a recrawl interval of 4s in 8 generations"),
            "{e}"
        );
        assert!(
            e.contains(&humantime::format_duration(other).to_string()),
            "{e}"
        );
    }
    let seen = SeenUrls::open(dir.path(), four).unwrap();
    assert!(seen.contains("https://example.com/a").unwrap());
}

#[test]
fn a_fingerprint_is_kept_its_whole_retention_window_and_forgotten_within_a_second_after() {
    for stored_at in [0u64, 1, 520, 999] {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::at(0);
        clock.set_ms(T0_MS + stored_at);
        let window = Duration::from_secs(3);
        let index = SimhashIndex::open(
            dir.path(),
            IndexConfig::default()
                .with_expected(1_000)
                .with_retention(Some(window)),
        )
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
        assert_eq!(index.check_and_insert(doc(1)).unwrap(), Decision::Unique(0));
        let stored = T0_MS + stored_at;
        // Still there a millisecond before the window ends ...
        clock.set_ms(stored + 2_999);
        assert_eq!(
            index.find(&doc(1)).unwrap(),
            Some(Decision::Exact(0)),
            "+{stored_at}"
        );
        // ... and gone within a second after it.
        clock.set_ms(stored + 4_000);
        assert_eq!(index.find(&doc(1)).unwrap(), None, "+{stored_at}");
    }
}
