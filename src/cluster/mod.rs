//! Crawling on several machines: the parts that let several `crawldedup crawl` processes
//! act as one crawl.
//!
//! - [`ring`]: which worker crawls which host (a weighted consistent-hash ring that every
//!   worker computes alike from the members and their weights).
pub mod ring;
