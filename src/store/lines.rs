//! The lines of pages.jsonl, duplicates.jsonl and failures.jsonl, as the crawl's files
//! write them (the fields are the contract in design.md).

use std::sync::Arc;

use serde::Serialize;

use crate::fingerprint::{Digest, Simhash};
use crate::index::DocId;

/// A line of pages.jsonl (the fields are the contract in design.md; their order is kept).
#[derive(Serialize)]
pub(super) struct PageLine {
    pub(super) url: String,
    pub(super) final_url: String,
    pub(super) status: u16,
    #[serde(serialize_with = "rfc3339_seconds")]
    pub(super) fetched_at: std::time::SystemTime,
    pub(super) depth: u32,
    pub(super) title: Option<String>,
    pub(super) language: Option<String>,
    #[serde(serialize_with = "display")]
    pub(super) simhash: Simhash,
    #[serde(serialize_with = "display")]
    pub(super) digest: Digest,
    pub(super) id: DocId,
    /// Estimated resemblance of the most alike stored page that was a candidate but not
    /// confirmed; absent when no stored page was a candidate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) nearest_similarity: Option<f64>,
    pub(super) bytes: usize,
    /// The version a recrawl found changed; absent for a first fetch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) previous: Option<PreviousLine>,
    #[serde(serialize_with = "shared_str")]
    pub(super) text: Arc<str>,
    pub(super) redirects: Vec<String>,
}

/// A line of duplicates.jsonl.
#[derive(Serialize)]
pub(super) struct DuplicateLine {
    pub(super) url: String,
    pub(super) final_url: String,
    #[serde(serialize_with = "rfc3339_seconds")]
    pub(super) fetched_at: std::time::SystemTime,
    pub(super) kind: &'static str,
    pub(super) verdict: &'static str,
    pub(super) of: String,
    pub(super) distance: u32,
    /// Estimated resemblance of the two main texts (1 for exact duplicates).
    pub(super) similarity: f64,
    /// Estimated share of the smaller main text found in the larger (1 for exact ones).
    pub(super) containment: f64,
    pub(super) depth: u32,
    /// For an unchanged page fetched again by a recrawl: when its earlier copy was fetched.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "rfc3339_seconds_option"
    )]
    pub(super) of_fetched_at: Option<std::time::SystemTime>,
}

/// The earlier version of a page in pages.jsonl (`previous`).
#[derive(Serialize)]
pub(super) struct PreviousLine {
    pub(super) id: DocId,
    #[serde(serialize_with = "display")]
    pub(super) digest: Digest,
    #[serde(serialize_with = "rfc3339_seconds")]
    pub(super) fetched_at: std::time::SystemTime,
}

/// An optional time as [`rfc3339_seconds`].
pub(super) fn rfc3339_seconds_option<S: serde::Serializer>(
    time: &Option<std::time::SystemTime>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match time {
        Some(t) => rfc3339_seconds(t, serializer),
        None => serializer.serialize_none(),
    }
}

/// A time as RFC 3339 in whole seconds, UTC (`2026-11-22T20:58:01Z`), written in place.
pub(super) fn rfc3339_seconds<S: serde::Serializer>(
    time: &std::time::SystemTime,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&humantime::format_rfc3339_seconds(*time))
}

/// A shared string as a string.
pub(super) fn shared_str<S: serde::Serializer>(
    text: &Arc<str>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(text)
}

/// A value by its `Display` form, written in place.
pub(super) fn display<S: serde::Serializer, T: std::fmt::Display>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// A line of failures.jsonl.
#[derive(Serialize)]
pub(super) struct FailureLine {
    pub(super) url: String,
    pub(super) kind: String,
    pub(super) reason: String,
    pub(super) status: Option<u16>,
    pub(super) attempts: u32,
    pub(super) depth: u32,
}

/// A JSONL line, built by the crawl loop and serialized by the writer thread (as the
/// record it holds).
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum JsonlLine {
    Page(Box<PageLine>),
    Duplicate(DuplicateLine),
    Failure(FailureLine),
}
