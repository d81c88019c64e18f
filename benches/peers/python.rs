//! The Python `simhash` package as a peer: `benches/peers/simhash_peer.py`, run by the
//! Python of `target/peers` (made by `scripts/peers.sh`), answers with one JSON object.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The Python of `target/peers`, when it has been made.
pub fn python() -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/peers/bin/python");
    python.exists().then_some(python)
}

/// Runs the peer script with `args`: its JSON answer, or the last line of its stderr.
pub fn simhash_peer(python: &Path, args: &[&OsStr]) -> Result<serde_json::Value, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/simhash_peer.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    serde_json::from_slice(&out.stdout).map_err(|_| {
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or("no answer")
            .to_string()
    })
}
