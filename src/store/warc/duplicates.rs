//! The records of duplicates: a revisit only for an identical payload, the rest archived
//! with their own bytes or under crawldedup's own revisit profile (see the [parent
//! module](super)), and the payload digests of the responses archived, by URL.

use sha1::Digest as _;

use super::cdxj::Indexed;
use super::{WarcWriter, base32_digest, http_head, sha1_digest};

/// WARC 1.1's profile for a revisit whose payload is, byte for byte, the record it refers to.
pub const IDENTICAL_PAYLOAD_PROFILE: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// The revisit profile of a near duplicate archived as a revisit
/// ([`DuplicateRecords::Revisit`]).
pub const NEAR_DUPLICATE_PROFILE: &str = "https://crawldedup.invalid/warc/revisit/near-duplicate";

/// The revisit profile of a page with its original's main text in other bytes, archived as
/// a revisit ([`DuplicateRecords::Revisit`]).
pub const SAME_TEXT_PROFILE: &str = "https://crawldedup.invalid/warc/revisit/same-main-text";

/// How a duplicate whose payload is not its original's is archived (`output.warc_duplicates`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DuplicateRecords {
    /// A `response` record with its own bytes and the verdict in extra fields.
    #[default]
    Response,
    /// A `revisit` record under crawldedup's own profile: smaller, and its bytes are not
    /// archived.
    Revisit,
}

/// What the crawl decided of a duplicate, for its WARC record.
#[derive(Debug, Clone)]
pub struct DuplicateOf<'a> {
    /// The stored page's URL.
    pub original: &'a str,
    /// When the original was fetched, for a recrawl that found a page unchanged.
    pub original_date: Option<std::time::SystemTime>,
    /// `None` for the same main text; the simhash distance for a near duplicate.
    pub distance: Option<u32>,
    /// The estimates the near duplicate was confirmed on.
    pub similarity: crate::index::Similarity,
}

impl WarcWriter {
    /// Keeps the payload digests of the responses in `tree` too, and looks originals up
    /// there when this run did not archive them.
    pub(crate) fn with_payloads(mut self, tree: sled::Tree) -> WarcWriter {
        self.payloads = Some(tree);
        self
    }

    /// The payload digest and record id of the response archived for `url`, if known.
    fn archived(&self, url: &str) -> std::io::Result<Option<([u8; 20], String)>> {
        if let Some(found) = self.responses.get(&url_key(url)) {
            return Ok(Some(found.clone()));
        }
        let Some(tree) = &self.payloads else {
            return Ok(None);
        };
        let value = tree.get(url.as_bytes()).map_err(std::io::Error::other)?;
        Ok(value.and_then(|v| {
            let payload: [u8; 20] = v.get(..20)?.try_into().ok()?;
            let id = std::str::from_utf8(&v[20..]).ok()?.to_string();
            Some((payload, id))
        }))
    }

    /// Sets how duplicates whose payload is not their original's are archived.
    pub fn with_duplicates(mut self, duplicates: DuplicateRecords) -> WarcWriter {
        self.duplicates = duplicates;
        self
    }

    /// The record for a duplicate (see the [module documentation](super)): a revisit with
    /// an identical payload when its bytes are its original's, else a response with its
    /// own bytes (or, with [`DuplicateRecords::Revisit`], a revisit under crawldedup's
    /// profile), the verdict in `WARC-Crawldedup-*` fields.
    pub fn duplicate(
        &mut self,
        url: &str,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
        of: &DuplicateOf<'_>,
    ) -> std::io::Result<()> {
        let payload: [u8; 20] = sha1::Sha1::digest(body).into();
        let original = self.archived(of.original)?;
        let identical = original.as_ref().is_some_and(|(p, _)| *p == payload);
        let verdict = verdict_fields(of, original.as_ref().map(|(_, id)| id.as_str()));
        if identical {
            let refers_to = original.map(|(_, id)| id);
            return self.revisit(
                url,
                status,
                content_type,
                (&payload, body.len()),
                IDENTICAL_PAYLOAD_PROFILE,
                of,
                refers_to,
                verdict,
            );
        }
        match self.duplicates {
            DuplicateRecords::Response => self
                .response_record(url, status, content_type, (body, &payload), verdict)
                .map(drop),
            DuplicateRecords::Revisit => {
                let profile = match of.distance {
                    None => SAME_TEXT_PROFILE,
                    Some(_) => NEAR_DUPLICATE_PROFILE,
                };
                self.revisit(
                    url,
                    status,
                    content_type,
                    (&payload, body.len()),
                    profile,
                    of,
                    None,
                    verdict,
                )
            }
        }
    }

    /// A `revisit` record under `profile` for a duplicate of `of.original`, whose payload
    /// digest is `payload`; `refers_to` is the original's record id when known.
    #[allow(clippy::too_many_arguments)]
    fn revisit(
        &mut self,
        url: &str,
        status: u16,
        content_type: Option<&str>,
        (payload, body_len): (&[u8; 20], usize),
        profile: &str,
        of: &DuplicateOf<'_>,
        refers_to: Option<String>,
        verdict: Vec<(&str, String)>,
    ) -> std::io::Result<()> {
        self.rotate_if_full()?;
        let block = http_head(status, content_type, body_len);
        let mut fields = vec![
            (
                "Content-Type",
                "application/http;msgtype=response".to_string(),
            ),
            ("WARC-Profile", profile.to_string()),
            ("WARC-Refers-To-Target-URI", of.original.to_string()),
            ("WARC-Payload-Digest", base32_digest(payload)),
            ("WARC-Block-Digest", sha1_digest(&block)),
        ];
        if let Some(id) = refers_to {
            fields.push(("WARC-Refers-To", id));
        }
        if let Some(date) = of.original_date {
            fields.push((
                "WARC-Refers-To-Date",
                humantime::format_rfc3339_seconds(date).to_string(),
            ));
        }
        fields.extend(verdict);
        let indexed = Indexed {
            status: None,
            content_type,
            payload,
        };
        self.record("revisit", Some(url), &fields, &[&block], Some(&indexed))?;
        Ok(())
    }
}

/// The `WARC-Crawldedup-*` fields of a duplicate's record: the verdict, the original's
/// URL (and record id, `original_record`, when known), and for a near duplicate its
/// distance and the estimates it was confirmed on.
pub fn verdict_fields(
    of: &DuplicateOf<'_>,
    original_record: Option<&str>,
) -> Vec<(&'static str, String)> {
    let mut verdict = vec![
        (
            "WARC-Crawldedup-Verdict",
            match of.distance {
                None => "exact-duplicate",
                Some(_) => "near-duplicate",
            }
            .to_string(),
        ),
        ("WARC-Crawldedup-Original", of.original.to_string()),
    ];
    if let Some(id) = original_record {
        verdict.push(("WARC-Crawldedup-Original-Record-ID", id.to_string()));
    }
    if let Some(d) = of.distance {
        verdict.push(("WARC-Crawldedup-Distance", d.to_string()));
        verdict.push((
            "WARC-Crawldedup-Similarity",
            format!("{:.3}", of.similarity.resemblance),
        ));
        verdict.push((
            "WARC-Crawldedup-Containment",
            format!("{:.3}", of.similarity.containment),
        ));
    }
    verdict
}

/// The key of a URL in the writer's table of archived responses.
pub(super) fn url_key(url: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(url.as_bytes())
}
