//! What the crawl tests check of the WARC files a crawl wrote: its records by type and
//! URL, and what warcio reads of them.
#![allow(dead_code)]

use std::path::Path;

use crate::warc;

/// WARC records as (type, target URI); a response that archives a duplicate's own bytes
/// (it carries crawldedup's verdict) has the type `duplicate`.
pub fn warc_records(out: &Path) -> Vec<(String, String)> {
    let text = warc::warc_text(out);
    text.split("WARC/1.1\r\n")
        .skip(1)
        .map(|record| {
            let field = |name: &str| crate::warc::field(record, name);
            let kind = match field("WARC-Type:") {
                kind if kind == "response" && !field("WARC-Crawldedup-Verdict:").is_empty() => {
                    "duplicate".to_string()
                }
                kind => kind,
            };
            (kind, field("WARC-Target-URI:"))
        })
        .collect()
}

/// What warcio reports of the WARC files in `out/warc` ([`warc::warcio_report`]).
pub fn warcio_report(out: &Path) -> Option<serde_json::Value> {
    warc::warcio_report(&out.join("warc"))
}

/// Runs warcio over the WARC files when CI names a Python that has it.
pub fn check_with_warcio(out: &Path, stored: usize) {
    let Some(report) = warcio_report(out) else {
        return;
    };
    assert_eq!(
        report["responses"].as_array().unwrap().len(),
        stored,
        "{report}"
    );
}
