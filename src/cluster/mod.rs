//! Crawling on several machines: the parts that let several `crawldedup crawl` processes
//! act as one crawl.
//!
//! - [`ring`]: which worker crawls which host (a weighted consistent-hash ring that every
//!   worker computes alike from the members and their weights).
//! - [`filter`]: the URL filter every worker shares, a blocked Bloom filter in Redis
//!   Cluster whose check-and-insert is one atomic `BITFIELD`.
//! - [`members`]: which workers are alive (heartbeat keys that expire) and their weights,
//!   from which each builds the ring.
pub mod filter;
pub mod members;
pub mod ring;
