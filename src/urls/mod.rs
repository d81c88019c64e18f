//! The URL layer: canonical form ([`canonical`]) and the seen-URL filter ([`seen`]).

pub mod canonical;
pub mod journal;
pub mod seen;

pub use canonical::{CanonicalError, CanonicalOptions, Canonicalizer, ParamPattern};
pub use seen::{BloomParams, SeenConfig, SeenError, SeenStats, SeenUrls};
