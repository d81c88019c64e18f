//! Reading any bytes as a web archive (WARC, plain or gzip or zstd, or ARC, as the first
//! byte picks the name) never panics; every problem, forgiven or not, is one printable
//! line once cut as `crawldedup dedup` prints it; every record yielded with its bytes
//! starts as a WARC record does; every offset lies within the input.
#![no_main]

use crawldedup::archive::{self, Item};
use libfuzzer_sys::fuzz_target;

const NAMES: [&str; 3] = ["fuzz.warc", "fuzz.warc.gz", "fuzz.arc"];

fn one_line(problem: &str) {
    let line = archive::printable_line(problem, archive::PROBLEM_CHARS);
    assert!(line.chars().count() <= archive::PROBLEM_CHARS);
    assert!(!line.chars().any(char::is_control), "{line:?}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let name = NAMES[usize::from(pick) % NAMES.len()];
    let raw = pick & 0x80 != 0;
    let within = |offset: u64| assert!(offset <= bytes.len() as u64, "offset {offset}");
    let read = archive::each_record_in(name, bytes, raw, |item| {
        match item {
            Item::Response(r) => {
                within(r.offset);
                r.warnings.iter().for_each(|w| one_line(w));
                if let Err(problem) = &r.body {
                    one_line(problem);
                }
                assert!(!raw || r.raw.starts_with(b"WARC/"));
            }
            Item::Revisit(r) => {
                within(r.offset);
                assert!(!raw || r.raw.starts_with(b"WARC/"));
            }
            Item::Other { offset, raw: bytes } => {
                within(offset);
                assert!(bytes.starts_with(b"WARC/"));
            }
            Item::Forgiven { offset, problem } => {
                within(offset);
                one_line(&problem);
            }
        }
        Ok::<(), ()>(())
    });
    if let Ok(Err(problem)) = read {
        one_line(&problem);
    }
});
