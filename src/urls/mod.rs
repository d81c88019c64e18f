//! The URL layer: canonical form ([`canonical`]), the seen-URL filter ([`seen`]) and the
//! SURT keys of web-archive indexes ([`surt`]).

pub mod canonical;
pub mod journal;
pub mod seen;
pub mod surt;

pub use canonical::{CanonicalError, CanonicalOptions, Canonicalizer, ParamPattern};
pub use seen::{BloomParams, SeenConfig, SeenError, SeenStats, SeenUrls};
