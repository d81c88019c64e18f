//! Crawling on several machines: the parts that let several `crawldedup crawl` processes
//! act as one crawl.
//!
//! - [`ring`]: which worker crawls which host (a weighted consistent-hash ring that every
//!   worker computes alike from the members and their weights).
//! - [`filter`]: the URL filter every worker shares, a blocked Bloom filter in Redis
//!   Cluster whose check-and-insert is one atomic `BITFIELD`.
pub mod filter;
pub mod ring;
