//! The integration tests, in one binary (one link of the dependency tree instead of one
//! per file). Each module is one of the former test files; the helpers they share are
//! in `common/`. Modules that need more than the page stage are built with the feature
//! that brings it. The tests that hold a process at a fault point are in the `failpoints`
//! binary (`tests/failpoints/`).

#[cfg(feature = "cli")]
#[path = "common/archive_checks.rs"]
mod archive_checks;
#[cfg(feature = "cli")]
#[path = "common/browser.rs"]
mod browser;
#[path = "common/child.rs"]
mod child;
#[cfg(feature = "crawler")]
mod common;
#[path = "common/docs.rs"]
mod docs;
#[path = "common/documents.rs"]
mod documents;
#[cfg(feature = "cluster")]
#[path = "common/redis_cluster.rs"]
mod redis_cluster;
#[cfg(feature = "cli")]
#[path = "common/cli.rs"]
mod run_cli;
#[cfg(feature = "cli")]
#[path = "common/warc.rs"]
mod warc;
#[cfg(feature = "cli")]
#[path = "common/workers.rs"]
mod workers;

mod canonical;
#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cluster")]
mod cluster;
#[cfg(feature = "cli")]
mod cluster_crawl;
#[cfg(feature = "cluster")]
mod cluster_index;
#[cfg(feature = "cluster")]
mod cluster_round_trips;
#[cfg(feature = "cluster")]
mod cluster_rules;
#[cfg(feature = "cluster")]
mod cluster_window;
#[cfg(feature = "cli")]
mod crawl;
#[cfg(all(feature = "crawler", feature = "fixture"))]
mod damage;
mod dedup;
mod dedup_scripts;
mod extract;
#[cfg(all(feature = "crawler", feature = "fixture"))]
mod fetch;
mod fingerprint;
#[cfg(all(feature = "crawler", feature = "fixture"))]
mod fixture;
#[cfg(feature = "cli")]
mod html_input;
mod index;
mod layout;
#[cfg(feature = "cli")]
mod refusals;
#[cfg(feature = "cli")]
mod scrapy;
mod seen;
#[cfg(feature = "cli")]
mod serve;
mod snapshot;
#[cfg(feature = "cli")]
mod state_kinds;
mod templates;
mod upkeep;
#[cfg(feature = "cli")]
mod warc_input;
#[cfg(feature = "cli")]
mod warc_out;
#[cfg(feature = "cli")]
mod warc_real;
#[cfg(feature = "cli")]
mod warc_records;
#[cfg(feature = "cli")]
mod watch;
#[cfg(feature = "cli")]
mod window;
mod window_precision;
