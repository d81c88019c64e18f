//! Reading the crawl's WARC output back in tests.

use std::io::Read;
use std::path::Path;

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
