//! The response records `crawldedup dedup` has read, in this run and in the earlier runs on
//! the same state directory, by what a `revisit` record names them with: the record id
//! (`WARC-Refers-To`), the URI (`WARC-Refers-To-Target-URI`), and the payload digest (an
//! identical-payload revisit, URL-agnostic ones included).
//!
//! The state directory keeps them in `warc-records.jsonl`, a line a record, appended at the
//! end of each run. It is a pointer to where a record was read, not an answer of the
//! index: a run killed before it appends leaves its records out, and a revisit of one of
//! them is then reported with no original (and a warning), never as a page. A line cut
//! short by such a kill is left out when the file is read.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;

/// The file in the state directory.
pub(super) const RECORDS_FILE: &str = "warc-records.jsonl";

/// Where a record was read: its URI, file and offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Read {
    pub(super) uri: String,
    pub(super) file: String,
    pub(super) offset: u64,
}

/// The response records read, by id, by URI and by payload digest.
#[derive(Default)]
pub(super) struct Records {
    by_id: HashMap<String, Read>,
    by_uri: HashMap<String, Read>,
    by_digest: HashMap<String, Read>,
    /// This run's, as lines of the file, until they are saved.
    new: Vec<String>,
    /// The file ends in a line cut short: the next line starts on a line of its own.
    cut: bool,
}

impl Records {
    /// The records of the earlier runs on `state_dir` (none when it has no such file).
    pub(super) fn open(state_dir: &Path) -> Result<Records, String> {
        let path = state_dir.join(RECORDS_FILE);
        let mut records = Records::default();
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(records),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let mut reader = std::io::BufReader::new(file);
        let mut line = String::new();
        loop {
            line.clear();
            let read = reader
                .read_line(&mut line)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            if read == 0 {
                break;
            }
            records.cut = !line.ends_with('\n');
            // A line cut short by a kill is not a record.
            let Ok(entry) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            let text = |key: &str| entry[key].as_str().map(str::to_string);
            let (Some(uri), Some(file), Some(offset)) =
                (text("uri"), text("file"), entry["offset"].as_u64())
            else {
                continue;
            };
            records.remember(
                Read { uri, file, offset },
                text("id").as_deref(),
                text("digest").as_deref(),
            );
        }
        Ok(records)
    }

    /// Appends this run's records to `state_dir`'s file, and syncs it.
    pub(super) fn save(&mut self, state_dir: &Path) -> Result<(), String> {
        if self.new.is_empty() {
            return Ok(());
        }
        let path = state_dir.join(RECORDS_FILE);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let mut text = if self.cut {
            "\n".to_string()
        } else {
            String::new()
        };
        text.push_str(&std::mem::take(&mut self.new).join("\n"));
        text.push('\n');
        self.cut = false;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
    /// Remembers a response record read in this run (the first of a URI or a digest is
    /// kept: a revisit refers to the record it repeats, which came first).
    pub(super) fn add(&mut self, read: Read, id: Option<&str>, digest: Option<&str>) {
        let line = serde_json::json!({
            "uri": read.uri,
            "file": read.file,
            "offset": read.offset,
            "id": id,
            "digest": digest,
        });
        self.new.push(line.to_string());
        self.remember(read, id, digest);
    }

    fn remember(&mut self, read: Read, id: Option<&str>, digest: Option<&str>) {
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
    pub(super) fn original(&self, revisit: &crawldedup::archive::Revisit) -> Option<&Read> {
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
