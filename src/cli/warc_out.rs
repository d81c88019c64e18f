//! `crawldedup dedup --warc-out DIR`: a deduplicated copy of each WARC or ARC input,
//! `DIR/NAME.warc.gz` with its CDXJ index `DIR/NAME.cdxj`.
//!
//! - Every record is copied as it was read (request, metadata, warcinfo, resource and the
//!   input's own revisits included), each in a gzip member of its own; an ARC record
//!   becomes the WARC record arc2warc makes of it.
//! - A response whose payload (the HTTP body as archived) is byte for byte that of a
//!   response already copied in this run, whatever its URL, becomes a revisit with the
//!   WARC 1.1 profile `identical-payload-digest`, naming that record (`WARC-Refers-To`,
//!   `-Target-URI`, `-Date`): a replay tool serves the same bytes from it.
//! - Any other duplicate keeps its bytes, with crawldedup's verdict in `WARC-Crawldedup-*`
//!   fields, as the crawler writes it; with `--warc-duplicates revisit`, it becomes a
//!   revisit under crawldedup's own profile, and its own bytes are dropped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crawldedup::PageVerdict;
use crawldedup::store::warc::{
    ArchiveCopy, DuplicateOf, DuplicateRecords, IDENTICAL_PAYLOAD_PROFILE, NEAR_DUPLICATE_PROFILE,
    SAME_TEXT_PROFILE, sha1_digest, verdict_fields,
};

/// A response copied as it was: what a revisit of it names.
#[derive(Clone)]
struct Kept {
    uri: String,
    date: Option<String>,
    record_id: Option<String>,
}

/// What the copies came to.
#[derive(Default)]
pub(super) struct Totals {
    files: usize,
    records: u64,
    identical: u64,
    marked: u64,
    revisits: u64,
    bytes_in: u64,
    bytes_out: u64,
    /// Copies left under their `.partial` name.
    partial: usize,
}

/// The copies of a run's archives.
pub(super) struct ArchiveOut {
    dir: PathBuf,
    duplicates: DuplicateRecords,
    current: Option<ArchiveCopy>,
    /// The responses copied, by the base32 SHA-1 of their payload.
    payloads: HashMap<String, Kept>,
    /// The responses copied, by URI.
    by_uri: HashMap<String, Kept>,
    /// The responses made revisits, by record id and by URI: the response each repeats,
    /// which an input's revisit of them is pointed to instead.
    replaced: HashMap<String, Kept>,
    pub(super) totals: Totals,
}

/// The name of the copy of `input`: its name without `.warc`, `.arc`, `.gz` or `.zst`,
/// then `.warc.gz`.
pub(super) fn copy_name(input: &Path) -> String {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut stem = name.as_str();
    for suffix in [".gz", ".zst"] {
        stem = stem.strip_suffix(suffix).unwrap_or(stem);
    }
    for suffix in [".warc", ".arc", ".WARC", ".ARC"] {
        stem = stem.strip_suffix(suffix).unwrap_or(stem);
    }
    format!("{stem}.warc.gz")
}

impl ArchiveOut {
    /// Copies into `dir`, after checking that no two archives of `inputs` have one copy's
    /// name and that none of the copies exists: `Err` names the problem.
    pub(super) fn new(
        dir: &Path,
        duplicates: DuplicateRecords,
        inputs: &[&Path],
    ) -> Result<ArchiveOut, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("--warc-out {}: {e}", dir.display()))?;
        let mut names: HashMap<String, &Path> = HashMap::new();
        for input in inputs {
            let name = copy_name(input);
            if let Some(other) = names.insert(name.clone(), input) {
                return Err(format!(
                    "--warc-out: {} and {} would both be copied to {}",
                    other.display(),
                    input.display(),
                    dir.join(&name).display()
                ));
            }
            let path = dir.join(&name);
            if path.exists() {
                return Err(format!(
                    "--warc-out: {} exists (copies are written to new files only)",
                    path.display()
                ));
            }
        }
        Ok(ArchiveOut {
            dir: dir.to_path_buf(),
            duplicates,
            current: None,
            payloads: HashMap::new(),
            by_uri: HashMap::new(),
            replaced: HashMap::new(),
            totals: Totals::default(),
        })
    }

    /// Starts the copy of `input`.
    pub(super) fn begin(&mut self, input: &Path) -> Result<(), String> {
        let path = self.dir.join(copy_name(input));
        let copy = ArchiveCopy::create(&path, &input.display().to_string())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        self.current = Some(copy);
        self.totals.files += 1;
        self.totals.bytes_in += std::fs::metadata(input).map_or(0, |m| m.len());
        Ok(())
    }

    /// Ends the copy begun last: `whole` when its input was read to its end. A copy of
    /// an input that could not be read on is left under its `.partial` name, which never
    /// passes for a whole copy; `Ok` then says where it is.
    pub(super) fn end(&mut self, whole: bool) -> Result<Option<String>, String> {
        let Some(copy) = self.current.take() else {
            return Ok(None);
        };
        let failed = |e: std::io::Error| format!("--warc-out {}: {e}", self.dir.display());
        if whole {
            self.totals.bytes_out += copy.finish().map_err(failed)?;
            return Ok(None);
        }
        let length = copy.length();
        let partial = copy.abandon().map_err(failed)?;
        self.totals.bytes_out += length;
        self.totals.partial += 1;
        Ok(Some(format!(
            "--warc-out: the copy of an input read only in part is left as {} (not a whole \
             copy: the records after the damage are not in it)",
            partial.display()
        )))
    }

    fn write(&mut self, record: &[u8]) -> Result<(), String> {
        let Some(copy) = self.current.as_mut() else {
            return Ok(());
        };
        self.totals.records += 1;
        copy.record(record)
            .map_err(|e| format!("--warc-out {}: {e}", self.dir.display()))
    }

    /// A record copied as it was (not a response). A revisit of a response that this copy
    /// made a revisit itself is pointed to the response that one repeats: a replay tool
    /// finds no payload behind a revisit.
    pub(super) fn keep(&mut self, raw: &[u8]) -> Result<(), String> {
        if raw.is_empty() {
            return Ok(());
        }
        if !header(raw, "WARC-Type").is_some_and(|t| t.eq_ignore_ascii_case("revisit")) {
            return self.write(raw);
        }
        self.totals.revisits += 1;
        let names = [
            header(raw, "WARC-Refers-To"),
            header(raw, "WARC-Refers-To-Target-URI"),
        ];
        let original = names
            .iter()
            .flatten()
            .find_map(|name| self.replaced.get(name))
            .cloned();
        let (Some(original), Some((head, block))) = (original, split_record(raw)) else {
            return self.write(raw);
        };
        let mut fields = vec![("WARC-Refers-To-Target-URI", original.uri.clone())];
        fields.extend(original.date.map(|d| ("WARC-Refers-To-Date", d)));
        fields.extend(original.record_id.map(|id| ("WARC-Refers-To", id)));
        let record = with_fields(&without_refers_to(head), block, &fields);
        self.write(&record)
    }

    /// A response record, `verdict` the page stage's decision on it (none when its body
    /// could not be read).
    pub(super) fn response(
        &mut self,
        raw: &[u8],
        verdict: Option<&PageVerdict>,
    ) -> Result<(), String> {
        let Some((head, block)) = split_record(raw) else {
            return self.write(raw);
        };
        let http_end = block
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map(|p| p + 4);
        let http_head = &block[..http_end.unwrap_or(0)];
        let payload = sha1_digest(&block[http_end.unwrap_or(block.len())..]);
        let payload = payload.trim_start_matches("sha1:").to_string();
        let uri = header(raw, "WARC-Target-URI").unwrap_or_default();
        // An empty payload (a redirect's) is not worth a revisit.
        if http_end.is_some_and(|end| end < block.len()) {
            if let Some(original) = self.payloads.get(&payload).cloned() {
                self.totals.identical += 1;
                let mut fields = vec![("WARC-Refers-To-Target-URI", original.uri.clone())];
                if let Some(date) = &original.date {
                    fields.push(("WARC-Refers-To-Date", date.clone()));
                }
                if let Some(id) = &original.record_id {
                    fields.push(("WARC-Refers-To", id.clone()));
                }
                let record = revisit(head, http_head, IDENTICAL_PAYLOAD_PROFILE, &payload, fields);
                for name in [header(raw, "WARC-Record-ID"), Some(uri)]
                    .into_iter()
                    .flatten()
                {
                    self.replaced.insert(name, original.clone());
                }
                return self.write(&record);
            }
        }
        let duplicate_of = match verdict {
            Some(PageVerdict::ExactDuplicate { of }) => Some((of, None, Default::default())),
            Some(PageVerdict::NearDuplicate {
                of,
                distance,
                similarity,
            }) => Some((of, Some(*distance), *similarity)),
            _ => None,
        };
        let Some((of, distance, similarity)) = duplicate_of else {
            let kept = Kept {
                uri: uri.clone(),
                date: header(raw, "WARC-Date"),
                record_id: header(raw, "WARC-Record-ID"),
            };
            self.payloads.entry(payload).or_insert_with(|| kept.clone());
            self.by_uri.insert(uri, kept);
            return self.write(raw);
        };
        self.totals.marked += 1;
        let original = self.by_uri.get(&of.name).cloned();
        let of = DuplicateOf {
            original: &of.name,
            original_date: None,
            distance,
            similarity,
        };
        let record_id = original.as_ref().and_then(|o| o.record_id.as_deref());
        let mut fields = verdict_fields(&of, record_id);
        match self.duplicates {
            DuplicateRecords::Response => {
                let record = with_fields(head, block, &fields);
                self.write(&record)
            }
            DuplicateRecords::Revisit => {
                fields.push(("WARC-Refers-To-Target-URI", of.original.to_string()));
                if let Some(o) = &original {
                    fields.extend(o.date.clone().map(|d| ("WARC-Refers-To-Date", d)));
                    fields.extend(o.record_id.clone().map(|id| ("WARC-Refers-To", id)));
                }
                let profile = match distance {
                    None => SAME_TEXT_PROFILE,
                    Some(_) => NEAR_DUPLICATE_PROFILE,
                };
                let record = revisit(head, http_head, profile, &payload, fields);
                self.write(&record)
            }
        }
    }

    /// The line that says what the copies came to.
    pub(super) fn summary(&self) -> String {
        let t = &self.totals;
        let saved = t.bytes_in.saturating_sub(t.bytes_out);
        let partial = match t.partial {
            0 => String::new(),
            n => format!(" ({n} of them in part only, left as .partial)"),
        };
        format!(
            "--warc-out {}: {} archives copied{partial}, {} records ({} made revisits of identical \
             payloads, {} duplicates {}, {} revisits of the input kept); {} bytes in, {} out, \
             {} saved ({:.1}%)",
            self.dir.display(),
            t.files,
            t.records,
            t.identical,
            t.marked,
            match self.duplicates {
                DuplicateRecords::Response => "kept with their verdict",
                DuplicateRecords::Revisit => "made revisits under crawldedup's profile",
            },
            t.revisits,
            t.bytes_in,
            t.bytes_out,
            saved,
            100.0 * saved as f64 / t.bytes_in.max(1) as f64
        )
    }
}

/// A record's header lines (through the blank line) and its block.
fn split_record(raw: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    Some((&raw[..end], &raw[end..]))
}

/// A header's value in a record's header lines (the version line skipped), without the
/// angle brackets of a record id.
fn header(raw: &[u8], name: &str) -> Option<String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end])
        .lines()
        .skip(1)
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
        .map(|v| {
            if name.eq_ignore_ascii_case("WARC-Target-URI") {
                v.trim_matches(['<', '>']).to_string()
            } else {
                v
            }
        })
}

/// Header lines without their `WARC-Refers-To*` fields.
fn without_refers_to(head: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(head);
    let mut out = Vec::with_capacity(head.len());
    for line in text.split_inclusive('\n') {
        let named = line.split_once(':').is_some_and(|(key, _)| {
            key.trim()
                .to_ascii_lowercase()
                .starts_with("warc-refers-to")
        });
        if !named {
            out.extend_from_slice(line.as_bytes());
        }
    }
    out
}

/// The record with `fields` added after its header lines.
fn with_fields(head: &[u8], block: &[u8], fields: &[(&str, String)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len() + block.len() + 256);
    out.extend_from_slice(&head[..head.len() - 2]);
    for (name, value) in fields {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(block);
    out
}

/// A revisit record in place of the response whose header lines are `head`: its URI and
/// date, the response's HTTP headers `http_head` as its block, `profile`, the payload
/// digest `payload` (base32) and `fields`.
fn revisit(
    head: &[u8],
    http_head: &[u8],
    profile: &str,
    payload: &str,
    fields: Vec<(&str, String)>,
) -> Vec<u8> {
    let mut out = String::with_capacity(1024);
    out.push_str("WARC/1.1\r\nWARC-Type: revisit\r\n");
    out.push_str(&format!(
        "WARC-Record-ID: <urn:uuid:{}>\r\n",
        uuid::Uuid::new_v4()
    ));
    for name in [
        "WARC-Date",
        "WARC-Target-URI",
        "WARC-IP-Address",
        "WARC-Warcinfo-ID",
    ] {
        if let Some(value) = header(head, name) {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    out.push_str(&format!("WARC-Profile: {profile}\r\n"));
    out.push_str(&format!("WARC-Payload-Digest: sha1:{payload}\r\n"));
    out.push_str(&format!(
        "WARC-Block-Digest: {}\r\n",
        sha1_digest(http_head)
    ));
    out.push_str("Content-Type: application/http;msgtype=response\r\n");
    for (name, value) in &fields {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str(&format!("Content-Length: {}\r\n\r\n", http_head.len()));
    let mut out = out.into_bytes();
    out.extend_from_slice(http_head);
    out
}
