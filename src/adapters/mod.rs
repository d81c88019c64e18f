//! Adapters that put the page stage into other crawlers: `spider` (feature `spider`) in
//! process, and any crawler at all over HTTP ([`serve`], `crawldedup serve`).

#[cfg(feature = "sidecar")]
pub mod serve;
#[cfg(feature = "spider")]
pub mod spider;
