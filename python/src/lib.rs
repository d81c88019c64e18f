//! `crawldedup._crawldedup`: the page stage ([`crawldedup::Dedup`]) for Python, wrapped by
//! the package in `python/crawldedup/` (which adds the Scrapy components).
//!
//! Every call that does work (a URL check, a page's extraction and decision, a checkpoint)
//! releases the GIL, so Python threads decide pages on every core; the stage's own
//! atomicity holds across them (of identical pages checked at once, exactly one is
//! `unique`). With `durability="answered"` (the default) an answer is durable before it is
//! returned, as the sidecar's: a URL answered `new` is in the URL journal, a page answered
//! `unique` is in the index, flushed; a kill -9 after the answer loses neither.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crawldedup::dedup::DedupError;
use crawldedup::{Config, PageVerdict as Verdict, UrlVerdict as UrlAnswer};

pyo3::create_exception!(
    crawldedup,
    Error,
    PyException,
    "Base class of every error crawldedup raises; its message is one line naming the thing \
     and the problem, as the command line prints it."
);
pyo3::create_exception!(
    crawldedup,
    ConfigError,
    Error,
    "A setting, a `settings` key or the configuration file is wrong."
);
pyo3::create_exception!(
    crawldedup,
    StateError,
    Error,
    "The state directory cannot be opened (damaged, locked by another process, of another \
     format) or could not be written."
);
pyo3::create_exception!(crawldedup, ClosedError, Error, "The Dedup was closed.");

/// The error and its causes in one line, each cause once (as the command line prints it).
fn one_line(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = String::new();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(e) = cause {
        let text = e.to_string();
        if !line.ends_with(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
        cause = e.source();
    }
    line
}

fn py_error(e: DedupError) -> PyErr {
    let line = one_line(&e);
    match e {
        DedupError::Config(_) => ConfigError::new_err(line),
        _ => StateError::new_err(line),
    }
}

/// When an answer is durable.
#[derive(Clone, Copy, PartialEq)]
enum Durability {
    /// Before it is returned.
    Answered,
    /// At the next checkpoint (faster; the caller redoes its recent work after a crash).
    Checkpoint,
}

/// Makes the URLs answered new so far durable: one sync of the URL journal, or, on a stage
/// opened without it (`durability="checkpoint"`), a checkpoint.
fn sync_urls(stage: &crawldedup::Dedup, journaled: bool) -> Result<(), DedupError> {
    if journaled {
        stage.sync_urls()
    } else {
        stage.checkpoint()
    }
}

/// The verdict on one URL.
#[pyclass(frozen, get_all, module = "crawldedup")]
struct UrlVerdict {
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
    fn new(url: String, answer: UrlAnswer) -> UrlVerdict {
        let verdict = answer.label();
        let (canonical, error) = match answer {
            UrlAnswer::New(c) | UrlAnswer::Seen(c) => (Some(c.to_string()), None),
            UrlAnswer::Invalid(e) => (None, Some(e.to_string())),
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
struct PageVerdict {
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
fn quoted(s: &str) -> String {
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
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl PageVerdict {
    fn new(url: String, verdict: &Verdict, text: Option<(Option<String>, String)>) -> Self {
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
struct Extracted {
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
fn body_bytes(body: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
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

fn parse_url(url: Option<&str>) -> PyResult<Option<url::Url>> {
    url.map(|u| url::Url::parse(u).map_err(|e| PyValueError::new_err(format!("url `{u}`: {e}"))))
        .transpose()
}

fn extracted(page: crawldedup::content::Extracted) -> Extracted {
    Extracted {
        title: page.title,
        text: page.text,
        language: page.language,
        description: page.description,
        canonical: page.canonical,
        links: page.links.into_iter().map(|l| l.url).collect(),
    }
}

/// One `section.key=value` override for [`Config::from_toml_str`], the value written as
/// TOML (a Python `str` is always a string, never read as a number).
fn setting(key: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    fn toml(value: &Bound<'_, PyAny>) -> PyResult<String> {
        if let Ok(b) = value.extract::<bool>() {
            return Ok(b.to_string());
        }
        if let Ok(n) = value.extract::<i64>() {
            return Ok(n.to_string());
        }
        if let Ok(x) = value.extract::<f64>() {
            return Ok(format!("{x:?}"));
        }
        if let Ok(s) = value.extract::<String>() {
            return Ok(serde_json::to_string(&s).unwrap_or_default());
        }
        if let Ok(items) = value.extract::<Vec<Bound<'_, PyAny>>>() {
            let items = items.iter().map(toml).collect::<PyResult<Vec<_>>>()?;
            return Ok(format!("[{}]", items.join(", ")));
        }
        Err(ConfigError::new_err(format!(
            "settings: a value of type {} cannot be a setting",
            value
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        )))
    }
    if value.is_none() {
        return Err(ConfigError::new_err(format!(
            "settings: {key}: None is not a value; leave the key out for its default"
        )));
    }
    Ok(format!("{key}={}", toml(value)?))
}

/// The page stage: canonical URLs checked against a Bloom filter, pages' main text
/// deduplicated against a persistent near-duplicate index.
#[pyclass(frozen, module = "crawldedup")]
struct Dedup {
    inner: RwLock<Option<Arc<crawldedup::Dedup>>>,
    state_dir: PathBuf,
    /// The temporary state directory of a stage opened without one, removed at close.
    temporary: Mutex<Option<tempfile::TempDir>>,
    durability: Durability,
}

impl Dedup {
    fn stage(&self) -> PyResult<Arc<crawldedup::Dedup>> {
        self.inner
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| {
                ClosedError::new_err(format!(
                    "crawldedup.Dedup on {}: closed",
                    self.state_dir.display()
                ))
            })
    }

    fn durability_of(&self, durable: Option<bool>) -> Durability {
        match durable {
            Some(true) => Durability::Answered,
            Some(false) => Durability::Checkpoint,
            None => self.durability,
        }
    }
}

#[pymethods]
impl Dedup {
    /// Opens the stage on `state_dir` (created if missing; a temporary directory, removed at
    /// `close()`, when `None`), resuming what an earlier run saved there.
    ///
    /// `config` is a crawler.toml file; `settings` a dict of `"section.key": value`
    /// overrides on top of it (`{"url_filter.expected_urls": 10_000_000}`). `durability`
    /// is `"answered"` (an answer is durable before it is returned) or `"checkpoint"`
    /// (durable at the next `checkpoint()` or `close()`; faster).
    #[new]
    #[pyo3(signature = (state_dir=None, *, config=None, settings=None, durability="answered"))]
    fn py_new(
        py: Python<'_>,
        state_dir: Option<PathBuf>,
        config: Option<PathBuf>,
        settings: Option<&Bound<'_, PyDict>>,
        durability: &str,
    ) -> PyResult<Dedup> {
        let durability = match durability {
            "answered" => Durability::Answered,
            "checkpoint" => Durability::Checkpoint,
            other => {
                return Err(ConfigError::new_err(format!(
                    "durability `{other}`: use \"answered\" or \"checkpoint\""
                )));
            }
        };
        let mut overrides = Vec::new();
        if let Some(settings) = settings {
            for (key, value) in settings.iter() {
                let key: String = key
                    .extract()
                    .map_err(|_| ConfigError::new_err("settings: every key must be a str"))?;
                overrides.push(setting(&key, &value)?);
            }
        }
        let config = match &config {
            Some(path) => Config::load(path, &overrides),
            None => Config::from_toml_str("", "settings", &overrides),
        }
        .map_err(|e| {
            // The overrides are the `settings` dict here, not the command line's --set.
            let line = one_line(&e);
            ConfigError::new_err(match line.strip_prefix("--set ") {
                Some(rest) => format!("settings: {rest}"),
                None => line,
            })
        })?;
        let (state_dir, temporary) = match state_dir {
            Some(dir) => (dir, None),
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("crawldedup-")
                    .tempdir()
                    .map_err(|e| StateError::new_err(format!("temporary state directory: {e}")))?;
                (dir.path().to_path_buf(), Some(dir))
            }
        };
        // Durable answers need the URL journal; without it a checkpoint saves the filter.
        let stage = py
            .detach(|| {
                crawldedup::Dedup::builder()
                    .config(&config)
                    .url_journal(durability == Durability::Answered)
                    .open(&state_dir)
            })
            .map_err(py_error)?;
        Ok(Dedup {
            inner: RwLock::new(Some(Arc::new(stage))),
            state_dir,
            temporary: Mutex::new(temporary),
            durability,
        })
    }

    /// The state directory.
    #[getter]
    fn state_dir(&self) -> PathBuf {
        self.state_dir.clone()
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }

    /// Canonicalizes `url` and checks it against the URL filter, recording it when new.
    /// `durable` overrides the stage's durability for this call (`True` on a stage opened
    /// with `durability="checkpoint"` costs a checkpoint).
    #[pyo3(signature = (url, *, durable=None))]
    fn check_url(
        &self,
        py: Python<'_>,
        url: String,
        durable: Option<bool>,
    ) -> PyResult<UrlVerdict> {
        let stage = self.stage()?;
        let durability = self.durability_of(durable);
        let journaled = self.durability == Durability::Answered;
        let answer = py
            .detach(|| -> Result<UrlAnswer, DedupError> {
                let answer = stage.check_url(&url)?;
                if durability == Durability::Answered && matches!(answer, UrlAnswer::New(_)) {
                    sync_urls(&stage, journaled)?;
                }
                Ok(answer)
            })
            .map_err(py_error)?;
        Ok(UrlVerdict::new(url, answer))
    }

    /// [`check_url`] for many URLs at once, in order, made durable together.
    #[pyo3(signature = (urls, *, durable=None))]
    fn check_urls(
        &self,
        py: Python<'_>,
        urls: Vec<String>,
        durable: Option<bool>,
    ) -> PyResult<Vec<UrlVerdict>> {
        let stage = self.stage()?;
        let durability = self.durability_of(durable);
        let journaled = self.durability == Durability::Answered;
        let answers = py
            .detach(|| -> Result<Vec<UrlAnswer>, DedupError> {
                let answers = urls
                    .iter()
                    .map(|u| stage.check_url(u))
                    .collect::<Result<Vec<_>, _>>()?;
                if durability == Durability::Answered
                    && answers.iter().any(|a| matches!(a, UrlAnswer::New(_)))
                {
                    sync_urls(&stage, journaled)?;
                }
                Ok(answers)
            })
            .map_err(py_error)?;
        Ok(urls
            .into_iter()
            .zip(answers)
            .map(|(url, answer)| UrlVerdict::new(url, answer))
            .collect())
    }

    /// Decides a page: its `body` (HTML bytes, or a `str`; decoded by its `content_type`
    /// and `<meta charset>`, its boilerplate and its host's template dropped) or its main
    /// `text` as it is. A unique page is recorded. With `include_text`, the verdict carries
    /// the title and main text.
    #[pyo3(signature = (url, *, body=None, content_type=None, text=None, include_text=false, durable=None))]
    #[allow(clippy::too_many_arguments)]
    fn check_page(
        &self,
        py: Python<'_>,
        url: String,
        body: Option<&Bound<'_, PyAny>>,
        content_type: Option<String>,
        text: Option<String>,
        include_text: bool,
        durable: Option<bool>,
    ) -> PyResult<PageVerdict> {
        let stage = self.stage()?;
        let durability = self.durability_of(durable);
        let body = match (body, &text) {
            (Some(body), None) => Some(body_bytes(body)?),
            (None, Some(_)) => None,
            _ => {
                return Err(PyTypeError::new_err(
                    "check_page: give exactly one of body= (the page's bytes) and text= \
                     (its main text)",
                ));
            }
        };
        let (verdict, page) = py
            .detach(|| -> Result<_, DedupError> {
                let (verdict, page) = match (body, text) {
                    (Some(body), _) => {
                        let (verdict, extracted) =
                            stage.check_page_extracted(&url, &body, content_type.as_deref())?;
                        (verdict, (extracted.title, extracted.text))
                    }
                    (None, text) => {
                        let text = text.unwrap_or_default();
                        (stage.check_text(&url, &text)?, (None, text))
                    }
                };
                if durability == Durability::Answered && matches!(verdict, Verdict::Unique { .. }) {
                    stage.sync_pages()?;
                }
                Ok((verdict, page))
            })
            .map_err(py_error)?;
        Ok(PageVerdict::new(
            url,
            &verdict,
            include_text.then_some(page),
        ))
    }

    /// The main content of an HTML page (bytes or `str`); `url` resolves its links. Records
    /// nothing.
    #[pyo3(signature = (html, url=None, content_type=None))]
    fn extract(
        &self,
        py: Python<'_>,
        html: &Bound<'_, PyAny>,
        url: Option<&str>,
        content_type: Option<String>,
    ) -> PyResult<Extracted> {
        extract(py, html, url, content_type)
    }

    /// The 64-bit simhash of a main text (word 3-shingles), as an int.
    fn simhash(&self, py: Python<'_>, text: String) -> u64 {
        simhash(py, text)
    }

    /// Saves the URL filter and flushes the index: everything answered so far is durable.
    fn checkpoint(&self, py: Python<'_>) -> PyResult<()> {
        let stage = self.stage()?;
        py.detach(|| stage.checkpoint()).map_err(py_error)
    }

    /// The stage's counters, as `crawldedup serve` gives them at `GET /v1/stats`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stats = self.stage()?.stats();
        let json =
            serde_json::to_string(&stats).map_err(|e| Error::new_err(format!("stats: {e}")))?;
        py.import("json")?.call_method1("loads", (json,))
    }

    /// Checkpoints and closes the stage, waiting for calls in progress on other threads;
    /// returns what the close did (`documents`, `snapshot_written`, `seconds`), or `None`
    /// when it was closed already. A temporary state directory is removed.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let taken = self.inner.write().unwrap_or_else(|p| p.into_inner()).take();
        let Some(mut stage) = taken else {
            return Ok(None);
        };
        // Calls on other threads hold the stage until they return.
        let report = py
            .detach(|| {
                loop {
                    match Arc::try_unwrap(stage) {
                        Ok(stage) => break stage.close(),
                        Err(shared) => {
                            stage = shared;
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                }
            })
            .map_err(py_error)?;
        if let Some(dir) = self
            .temporary
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let path = dir.path().to_path_buf();
            dir.close().map_err(|e| {
                StateError::new_err(format!("temporary state directory {}: {e}", path.display()))
            })?;
        }
        let d = PyDict::new(py);
        d.set_item("documents", report.documents)?;
        d.set_item("snapshot_written", report.snapshot_written)?;
        d.set_item("seconds", report.seconds)?;
        Ok(Some(d))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "Dedup({}{})",
            quoted(&self.state_dir.display().to_string()),
            if self.closed() { ", closed" } else { "" }
        )
    }
}

/// The main content of an HTML page (bytes or `str`); `url` resolves its links.
#[pyfunction]
#[pyo3(signature = (html, url=None, content_type=None))]
fn extract(
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
fn simhash(py: Python<'_>, text: String) -> u64 {
    py.detach(|| crawldedup::fingerprint::simhash(&text).0)
}

/// The canonical form of a URL, as the stage checks it.
#[pyfunction]
fn canonicalize(url: &str) -> PyResult<String> {
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
