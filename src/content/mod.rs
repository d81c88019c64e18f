//! Page content: bytes to text ([`decode`](mod@decode)) and text to main content ([`extract`](mod@extract)).

pub mod decode;
pub mod extract;
mod strip;

pub use decode::{CharsetSource, Decoded, decode};
pub use extract::{BlockKind, Extracted, Link, extract, extract_bytes};
pub(crate) use extract::{RawLinks, extract_bytes_unresolved};
