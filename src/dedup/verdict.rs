//! What the stage says about a URL and about a page.

use url::Url;

use crate::fingerprint::{Digest, Simhash};
use crate::index::{DocId, Similarity};
use crate::urls::CanonicalError;

/// What the stage says about a URL.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum UrlVerdict {
    /// Never seen: now recorded; fetch it (this canonical form).
    New(Url),
    /// Seen before (or, at the filter's false-positive rate, a URL that only looks seen).
    Seen(Url),
    /// Not a crawlable URL.
    Invalid(CanonicalError),
}

impl UrlVerdict {
    /// `"new"`, `"seen"` or `"invalid"`.
    pub fn label(&self) -> &'static str {
        match self {
            UrlVerdict::New(_) => "new",
            UrlVerdict::Seen(_) => "seen",
            UrlVerdict::Invalid(_) => "invalid",
        }
    }
}

/// The stored page that a duplicate repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Original {
    /// Its id in the index.
    pub id: DocId,
    /// Its URL (or the name it was checked under).
    pub name: String,
}

/// What the stage says about a page.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PageVerdict {
    /// Nothing like it was seen: it is now recorded; store it.
    Unique {
        /// Its id in the index.
        id: DocId,
        /// Its simhash (as [`crate::store::StoredPage::simhash`] calls it).
        simhash: Simhash,
        /// The exact digest of its main text.
        digest: Digest,
        /// The estimates for the most alike stored page that was a candidate but not
        /// confirmed (none when no stored page was a candidate): how close the page came to
        /// being called a near-duplicate.
        nearest: Option<Similarity>,
    },
    /// The same main text (after whitespace normalisation) was seen.
    ExactDuplicate {
        /// The page it repeats.
        of: Original,
    },
    /// A main text confirmed alike on its sketch was seen.
    NearDuplicate {
        /// The most similar page it repeats.
        of: Original,
        /// Hamming distance between the two simhashes.
        distance: u32,
        /// The estimated resemblance and containment it was confirmed on.
        similarity: Similarity,
    },
    /// The page has no main text to compare (empty, not HTML, or all boilerplate).
    NoText,
}

/// A duplicate verdict, exact or near ([`PageVerdict::duplicate`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Duplicate<'a> {
    /// The page it repeats.
    pub of: &'a Original,
    /// Hamming distance between the two simhashes (`None` for an exact duplicate).
    pub distance: Option<u32>,
    /// The estimated resemblance and containment it was confirmed on (1 and 1 for an
    /// exact duplicate).
    pub similarity: Similarity,
}

impl PageVerdict {
    /// `"unique"`, `"exact_duplicate"`, `"near_duplicate"` or `"no_text"`, as printed by
    /// `crawldedup dedup --json` and the sidecar.
    pub fn label(&self) -> &'static str {
        match self {
            PageVerdict::Unique { .. } => "unique",
            PageVerdict::ExactDuplicate { .. } => "exact_duplicate",
            PageVerdict::NearDuplicate { .. } => "near_duplicate",
            PageVerdict::NoText => "no_text",
        }
    }

    /// The verdict's fields as `crawldedup dedup --json` and the sidecar print them:
    /// `verdict`; `of` and `distance` for duplicates (distance 0 for exact ones); for
    /// near-duplicates also `similarity` (estimated resemblance) and `containment`, to three
    /// decimals; `id`, `simhash` and `digest` for unique pages, and `nearest_similarity`
    /// when a stored page was a candidate that the confirmation refused.
    pub fn json_fields(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut fields = serde_json::Map::new();
        fields.insert("verdict".into(), self.label().into());
        match self {
            PageVerdict::Unique {
                id,
                simhash,
                digest,
                nearest,
            } => {
                fields.insert("id".into(), (*id).into());
                fields.insert("simhash".into(), simhash.to_string().into());
                fields.insert("digest".into(), digest.to_string().into());
                if let Some(nearest) = nearest {
                    fields.insert(
                        "nearest_similarity".into(),
                        crate::index::round3(nearest.resemblance).into(),
                    );
                }
            }
            PageVerdict::ExactDuplicate { of } => {
                fields.insert("of".into(), of.name.clone().into());
                fields.insert("distance".into(), 0.into());
            }
            PageVerdict::NearDuplicate {
                of,
                distance,
                similarity,
            } => {
                fields.insert("of".into(), of.name.clone().into());
                fields.insert("distance".into(), (*distance).into());
                fields.insert(
                    "similarity".into(),
                    crate::index::round3(similarity.resemblance).into(),
                );
                fields.insert(
                    "containment".into(),
                    crate::index::round3(similarity.containment).into(),
                );
            }
            PageVerdict::NoText => {}
        }
        fields
    }

    /// For a duplicate, exact or near: the page it repeats and the measures it was called
    /// a duplicate on, so that a caller handles both kinds in one place.
    pub fn duplicate(&self) -> Option<Duplicate<'_>> {
        match self {
            PageVerdict::ExactDuplicate { of } => Some(Duplicate {
                of,
                distance: None,
                similarity: Similarity {
                    resemblance: 1.0,
                    containment: 1.0,
                },
            }),
            PageVerdict::NearDuplicate {
                of,
                distance,
                similarity,
            } => Some(Duplicate {
                of,
                distance: Some(*distance),
                similarity: *similarity,
            }),
            PageVerdict::Unique { .. } | PageVerdict::NoText => None,
        }
    }

    /// The page repeated, for duplicates.
    pub fn original(&self) -> Option<&Original> {
        match self {
            PageVerdict::ExactDuplicate { of } | PageVerdict::NearDuplicate { of, .. } => Some(of),
            _ => None,
        }
    }
}
