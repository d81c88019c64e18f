//! What crosses into Python: the verdicts, an extraction, and the bytes of a body.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crawldedup::{PageVerdict as Verdict, UrlVerdict as UrlAnswer};

/// The verdict on one URL.
#[pyclass(frozen, get_all, module = "crawldedup")]
pub(crate) struct UrlVerdict {
    /// `"new"` (never seen: now recorded, fetch it), `"seen"` or `"invalid"`.
    verdict: &'static str,
    /// The URL as given.
    url: String,
    /// Its canonical form (`None` when invalid).
    canonical: Option<String>,
    /// Why it is invalid (`None` otherwise).
    error: Option<String>,
}

#[pymethods]
impl UrlVerdict {
    /// True for `"new"`.
    #[getter]
    fn is_new(&self) -> bool {
        self.verdict == "new"
    }

    fn __repr__(&self) -> String {
        let verdict = quoted(self.verdict);
        match (&self.canonical, &self.error) {
            (Some(c), _) => format!("UrlVerdict(verdict={verdict}, canonical={})", quoted(c)),
            (None, Some(e)) => format!("UrlVerdict(verdict={verdict}, error={})", quoted(e)),
            (None, None) => format!("UrlVerdict(verdict={verdict})"),
        }
    }
}

impl UrlVerdict {
    pub(crate) fn new(url: String, answer: UrlAnswer) -> UrlVerdict {
        let verdict = answer.label();
        let (canonical, error) = match answer {
            UrlAnswer::New(c) | UrlAnswer::Seen(c) => (Some(c.to_string()), None),
            UrlAnswer::Invalid(e) => (None, Some(e.to_string())),
            // A verdict of a later version of the crate: its label says what it is.
            _ => (None, None),
        };
        UrlVerdict {
            verdict,
            url,
            canonical,
            error,
        }
    }
}

/// The verdict on one page, with the field names of `crawldedup dedup --json` and the
/// sidecar.
#[pyclass(frozen, get_all, module = "crawldedup")]
pub(crate) struct PageVerdict {
    /// `"unique"` (now recorded: store it), `"exact_duplicate"`, `"near_duplicate"` or
    /// `"no_text"` (no main text to compare).
    verdict: &'static str,
    /// The page's URL (or the name it was checked under).
    url: String,
    /// For a duplicate: the URL of the stored page it repeats.
    of: Option<String>,
    /// For a duplicate: the Hamming distance between the two simhashes (0 for an exact
    /// one).
    distance: Option<u32>,
    /// For a duplicate: the estimated resemblance of the two texts' word 3-shingles (1.0
    /// for an exact one).
    similarity: Option<f64>,
    /// For a duplicate: the estimated share of the smaller text's shingles found in the
    /// larger (1.0 for an exact one).
    containment: Option<f64>,
    /// For a unique page: its id in the index.
    id: Option<u64>,
    /// For a unique page: its simhash, 16 hex digits.
    simhash: Option<String>,
    /// For a unique page: the digest of its whitespace-normalised main text.
    digest: Option<String>,
    /// For a unique page: the resemblance of the most alike stored page that was a
    /// candidate but not confirmed.
    nearest_similarity: Option<f64>,
    /// The page's title, with `include_text=True`.
    title: Option<String>,
    /// The page's main text, with `include_text=True`.
    text: Option<String>,
}

#[pymethods]
impl PageVerdict {
    /// True for an exact or near duplicate.
    #[getter]
    fn is_duplicate(&self) -> bool {
        self.of.is_some()
    }

    /// True for `"unique"`.
    #[getter]
    fn is_unique(&self) -> bool {
        self.verdict == "unique"
    }

    /// The fields as a dict, as `crawldedup dedup --json` prints them (`None` fields left
    /// out).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("url", &self.url)?;
        d.set_item("verdict", self.verdict)?;
        // `set_item` takes any value Python can hold; a field that is `None` is left out.
        fn put<'py, T: IntoPyObject<'py>>(
            d: &Bound<'py, PyDict>,
            key: &str,
            value: Option<T>,
        ) -> PyResult<()> {
            match value {
                Some(value) => d.set_item(key, value),
                None => Ok(()),
            }
        }
        put(&d, "of", self.of.as_deref())?;
        put(&d, "distance", self.distance)?;
        put(&d, "similarity", self.similarity)?;
        put(&d, "containment", self.containment)?;
        put(&d, "id", self.id)?;
        put(&d, "simhash", self.simhash.as_deref())?;
        put(&d, "digest", self.digest.as_deref())?;
        put(&d, "nearest_similarity", self.nearest_similarity)?;
        put(&d, "title", self.title.as_deref())?;
        put(&d, "text", self.text.as_deref())?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        match (&self.of, self.distance, self.similarity) {
            (Some(of), Some(d), Some(s)) => format!(
                "PageVerdict(verdict={:?}, url={:?}, of={of:?}, distance={d}, similarity={s:.3})",
                self.verdict, self.url
            ),
            _ => format!(
                "PageVerdict(verdict={:?}, url={:?})",
                self.verdict, self.url
            ),
        }
    }
}

/// A string as Python's repr writes it (single quotes).
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Three decimals, as the command line and the sidecar print measures.
pub(crate) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl PageVerdict {
    pub(crate) fn new(
        url: String,
        verdict: &Verdict,
        text: Option<(Option<String>, String)>,
    ) -> Self {
        let mut v = PageVerdict {
            verdict: verdict.label(),
            url,
            of: None,
            distance: None,
            similarity: None,
            containment: None,
            id: None,
            simhash: None,
            digest: None,
            nearest_similarity: None,
            title: None,
            text: None,
        };
        if let Some(duplicate) = verdict.duplicate() {
            v.of = Some(duplicate.of.name.clone());
            v.distance = Some(duplicate.distance.unwrap_or(0));
            v.similarity = Some(round3(duplicate.similarity.resemblance));
            v.containment = Some(round3(duplicate.similarity.containment));
        }
        if let Verdict::Unique {
            id,
            simhash,
            digest,
            nearest,
        } = verdict
        {
            v.id = Some(*id);
            v.simhash = Some(simhash.to_string());
            v.digest = Some(digest.to_string());
            v.nearest_similarity = nearest.map(|n| round3(n.resemblance));
        }
        if let Some((title, text)) = text {
            v.title = title;
            v.text = Some(text);
        }
        v
    }
}

/// What the extractor finds in a page.
#[pyclass(frozen, get_all, module = "crawldedup")]
pub(crate) struct Extracted {
    /// The title: `og:title`, else the main `h1`, else `<title>` without the site name.
    title: Option<String>,
    /// The main text: paragraphs separated by blank lines.
    text: String,
    /// The declared language (`<html lang>`, else `Content-Language`).
    language: Option<String>,
    /// The page's own summary (`og:description`, else `<meta name="description">`).
    description: Option<String>,
    /// The address the page gives itself (`<link rel="canonical">`, else `og:url`).
    canonical: Option<String>,
    /// Every followable link, absolute, in document order.
    links: Vec<String>,
}

#[pymethods]
impl Extracted {
    fn __repr__(&self) -> String {
        format!(
            "Extracted(title={}, text={} chars, links={})",
            self.title.as_deref().map_or("None".to_string(), quoted),
            self.text.chars().count(),
            self.links.len()
        )
    }
}

/// Bytes of a `bytes`, `bytearray` or `memoryview` object, or a `str` encoded as UTF-8.
pub(crate) fn body_bytes(body: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(bytes) = body.cast::<PyBytes>() {
        return Ok(bytes.as_bytes().to_vec());
    }
    if let Ok(text) = body.cast::<PyString>() {
        return Ok(text.to_cow()?.as_bytes().to_vec());
    }
    body.extract::<Vec<u8>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "body: expected bytes or str, got {}",
            body.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

pub(crate) fn parse_url(url: Option<&str>) -> PyResult<Option<url::Url>> {
    url.map(|u| url::Url::parse(u).map_err(|e| PyValueError::new_err(format!("url `{u}`: {e}"))))
        .transpose()
}

pub(crate) fn extracted(page: crawldedup::content::Extracted) -> Extracted {
    Extracted {
        title: page.title,
        text: page.text,
        language: page.language,
        description: page.description,
        canonical: page.canonical,
        links: page.links.into_iter().map(|l| l.url).collect(),
    }
}
