//! The exceptions, and a stage error as one of them in one line.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use crawldedup::dedup::DedupError;

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
pub(crate) fn one_line(e: &(dyn std::error::Error + 'static)) -> String {
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

pub(crate) fn py_error(e: DedupError) -> PyErr {
    let line = one_line(&e);
    match e {
        DedupError::Config(_) => ConfigError::new_err(line),
        _ => StateError::new_err(line),
    }
}
