//! `crawldedup._crawldedup`: the page stage ([`crawldedup::Dedup`]) for Python, wrapped by
//! the package in `python/crawldedup/` (which adds the Scrapy components).
//!
//! Every call that does work (a URL check, a page's extraction and decision, a checkpoint)
//! releases the GIL, so Python threads decide pages on every core; the stage's own
//! atomicity holds across them (of identical pages checked at once, exactly one is
//! `unique`). With `durability="answered"` (the default) an answer is durable before it is
//! returned, as the sidecar's: a URL answered `new` is in the URL journal, a page answered
//! `unique` is in the index, flushed; a kill -9 after the answer loses neither.

mod errors;
mod stage;
mod values;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use errors::{ClosedError, ConfigError, Error, StateError};
use stage::Dedup;
use values::{Extracted, PageVerdict, UrlVerdict, body_bytes, extracted, parse_url};

/// The main content of an HTML page (bytes or `str`); `url` resolves its links.
#[pyfunction]
#[pyo3(signature = (html, url=None, content_type=None))]
pub(crate) fn extract(
    py: Python<'_>,
    html: &Bound<'_, PyAny>,
    url: Option<&str>,
    content_type: Option<String>,
) -> PyResult<Extracted> {
    let bytes = body_bytes(html)?;
    let url = parse_url(url)?;
    Ok(extracted(py.detach(|| {
        crawldedup::content::extract_bytes(&bytes, content_type.as_deref(), url.as_ref())
    })))
}

/// The 64-bit simhash of a main text (word 3-shingles), as an int.
#[pyfunction]
pub(crate) fn simhash(py: Python<'_>, text: String) -> u64 {
    py.detach(|| crawldedup::fingerprint::simhash(&text).0)
}

/// The canonical form of a URL, as the stage checks it.
#[pyfunction]
pub(crate) fn canonicalize(url: &str) -> PyResult<String> {
    crawldedup::Canonicalizer::default()
        .canonicalize(url)
        .map(|u| u.to_string())
        .map_err(|e| PyValueError::new_err(format!("url `{url}`: {e}")))
}

#[pymodule]
fn _crawldedup(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Dedup>()?;
    m.add_class::<UrlVerdict>()?;
    m.add_class::<PageVerdict>()?;
    m.add_class::<Extracted>()?;
    m.add_function(wrap_pyfunction!(extract, m)?)?;
    m.add_function(wrap_pyfunction!(simhash, m)?)?;
    m.add_function(wrap_pyfunction!(canonicalize, m)?)?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("StateError", py.get_type::<StateError>())?;
    m.add("ClosedError", py.get_type::<ClosedError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
