//! `crawldedup.Dedup`: the stage on a state directory.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crawldedup::dedup::DedupError;
use crawldedup::{Config, PageVerdict as Verdict, UrlVerdict as UrlAnswer};

use crate::errors::{ClosedError, ConfigError, Error, StateError, one_line, py_error};
use crate::values::{Extracted, PageVerdict, UrlVerdict, body_bytes, quoted};

/// When an answer is durable.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Durability {
    /// Before it is returned.
    Answered,
    /// At the next checkpoint (faster; the caller redoes its recent work after a crash).
    Checkpoint,
}

/// Makes the URLs answered new so far durable: one sync of the URL journal, or, on a stage
/// opened without it (`durability="checkpoint"`), a checkpoint.
pub(crate) fn sync_urls(stage: &crawldedup::Dedup, journaled: bool) -> Result<(), DedupError> {
    if journaled {
        stage.sync_urls()
    } else {
        stage.checkpoint()
    }
}

/// One `section.key=value` override for [`Config::from_toml_str`], the value written as
/// TOML (a Python `str` is always a string, never read as a number).
pub(crate) fn setting(key: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
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
pub(crate) struct Dedup {
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
        crate::extract(py, html, url, content_type)
    }

    /// The 64-bit simhash of a main text (word 3-shingles), as an int.
    fn simhash(&self, py: Python<'_>, text: String) -> u64 {
        crate::simhash(py, text)
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
