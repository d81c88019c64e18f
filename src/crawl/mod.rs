//! The focused crawler's parts: the SSRF guard and the fetcher (the frontier, the loop and
//! the outputs are still to come; see the README).

pub mod fetch;
pub mod guard;

pub use fetch::{FetchConfig, FetchError, Fetched, Fetcher};
