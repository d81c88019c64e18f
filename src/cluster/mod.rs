//! Crawling on several machines: the parts that let several `crawldedup crawl` processes
//! act as one crawl.
//!
//! - [`ring`]: which worker crawls which host (a weighted consistent-hash ring that every
//!   worker computes alike from the members and their weights).
//! - [`filter`]: the URL filter every worker shares, a blocked Bloom filter in Redis
//!   Cluster whose check-and-insert is one atomic `BITFIELD`.
//! - [`members`]: which workers are alive (heartbeat keys that expire) and their weights,
//!   from which each builds the ring.
//! - [`inbox`]: links to hosts another worker owns, handed on through that worker's
//!   stream, acknowledged once durable, rerouted when their worker is gone.
//! - [`index`]: the near-duplicate index every worker decides against, with the rule that
//!   lets exactly one of several racing near copies keep its page.
//! - [`stats`]: every worker's figures, for `crawldedup stats --cluster`.
pub mod filter;
pub mod inbox;
pub mod index;
pub(crate) mod keys;
pub use keys::committed;
pub mod members;
pub mod ring;
pub mod stats;
