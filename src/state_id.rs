//! The identity of a state directory, below every layer that writes it into its parts.

/// The identity of a state directory, written into its parts (0 in parts written before
/// the ledger existed; see [`crate::ledger`]).
pub type StateId = u128;
