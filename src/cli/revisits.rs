//! The records `crawldedup dedup` has read in this run, by what a `revisit` record names
//! them with: the record id (`WARC-Refers-To`), the URI (`WARC-Refers-To-Target-URI`), and
//! the payload digest (an identical-payload revisit, URL-agnostic ones included).

use std::collections::HashMap;

/// Where a record was read: its URI, file and offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Read {
    pub(super) uri: String,
    pub(super) file: String,
    pub(super) offset: u64,
}

/// The response records of this run, by id, by URI and by payload digest.
#[derive(Default)]
pub(super) struct Records {
    by_id: HashMap<String, Read>,
    by_uri: HashMap<String, Read>,
    by_digest: HashMap<String, Read>,
}

impl Records {
    /// Remembers a response record (the first of a URI or a digest is kept: a revisit
    /// refers to the record it repeats, which came first).
    pub(super) fn add(&mut self, read: Read, id: Option<&str>, digest: Option<&str>) {
        if let Some(id) = id {
            self.by_id.insert(id.to_string(), read.clone());
        }
        if let Some(digest) = digest {
            self.by_digest
                .entry(digest.to_string())
                .or_insert_with(|| read.clone());
        }
        self.by_uri.entry(read.uri.clone()).or_insert(read);
    }

    /// The record a revisit names: by its id first, then by the URI it names, then by the
    /// payload digest the two share.
    pub(super) fn original(&self, revisit: &super::warc_input::Revisit) -> Option<&Read> {
        revisit
            .refers_to
            .as_ref()
            .and_then(|id| self.by_id.get(id))
            .or_else(|| {
                revisit
                    .refers_to_uri
                    .as_ref()
                    .and_then(|uri| self.by_uri.get(uri))
            })
            .or_else(|| {
                revisit
                    .payload_digest
                    .as_ref()
                    .and_then(|d| self.by_digest.get(d))
            })
    }
}
