//! Reading the crawl's outputs back in tests: the WARC files and the JSONL files.

use std::io::Read;
use std::path::Path;

/// The JSON lines of `path` (none when it does not exist).
pub fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every WARC file under `out/warc`, in name order, decompressed (gzip member by member)
/// into one text.
pub fn warc_text(out: &Path) -> String {
    let mut names: Vec<_> = std::fs::read_dir(out.join("warc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let mut text = Vec::new();
    for path in names {
        let bytes = std::fs::read(path).unwrap();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut text)
            .unwrap();
    }
    String::from_utf8_lossy(&text).into_owned()
}
