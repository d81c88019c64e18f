//! The layout a shared index is created with, claimed under `NAME:nd:layout`: every worker
//! of a cluster asks for the same one or is refused in one line.
//!
//! The layout names the table plan, the fingerprint version, the buckets' grouping, the
//! retention window and the format of the records workers write (`records=N`,
//! [`INDEX_FORMAT_VERSION`]). A worker reads records of every format from
//! [`OLDEST_INDEX_FORMAT`] up to its own, so a newer worker joins an index whose layout names
//! an older format, and raises the format in the layout (compare and set, one script):
//! workers of the older build are refused from then on, as they could not read its records.
//! A layout written before the format was part of it names none and is taken as format 9,
//! the last such. A worker never joins an index whose records are newer than it reads.
//!
//! The fingerprint version is raised the same way: a worker joins an index of any version
//! from [`OLDEST_FINGERPRINT`] up to its own ([`FINGERPRINT_VERSION`]), as the local index
//! upgrades in place. Its documents stay: one repeated exactly is still found (the digest
//! is of the text, not its tokens), and an edited copy of one whose text the new version
//! reads otherwise (Korean, in version 5) may be stored as a page of its own, a repeat kept
//! and never a page lost.

use super::super::filter::{Cluster, ClusterError};
use crate::fingerprint::FINGERPRINT_VERSION;
use crate::index::{INDEX_FORMAT_VERSION, OLDEST_FINGERPRINT, OLDEST_INDEX_FORMAT};

/// The format of records in a layout string that names none.
const FORMAT_BEFORE_NAMED: u32 = 9;

/// Sets the layout to `ARGV[2]` if it is still `ARGV[1]`.
const RAISE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('SET', KEYS[1], ARGV[2])
    return 1
end
return 0
";

/// The layout string: `settings` (plan, fingerprint, buckets) with this build's record
/// format, then the retention window if there is one.
pub(super) fn layout(settings: &str, retention_secs: Option<u64>) -> String {
    let mut layout = format!("{settings} records={INDEX_FORMAT_VERSION}");
    if let Some(window) = retention_secs {
        layout.push_str(&format!(" retention={window}s"));
    }
    layout
}

/// What a layout names that a newer worker may raise: its record format and its
/// fingerprint version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Versions {
    records: u32,
    fingerprint: u32,
}

impl Versions {
    /// Whether this build reads an index of these versions, raising them to its own.
    fn readable(self) -> bool {
        (OLDEST_INDEX_FORMAT..=INDEX_FORMAT_VERSION).contains(&self.records)
            && (OLDEST_FINGERPRINT..=FINGERPRINT_VERSION).contains(&self.fingerprint)
    }
}

/// A layout without its record format and fingerprint version, and those two. A number
/// that does not parse is one no build reads (`u32::MAX`), and so is a missing fingerprint
/// version: every layout written names one.
fn split(layout: &str) -> (String, Versions) {
    let mut versions = Versions {
        records: FORMAT_BEFORE_NAMED,
        fingerprint: u32::MAX,
    };
    let rest: Vec<&str> = layout
        .split(' ')
        .filter(|part| {
            if let Some(n) = part.strip_prefix("records=") {
                versions.records = n.parse().unwrap_or(u32::MAX);
                false
            } else if let Some(n) = part.strip_prefix("fingerprint=") {
                versions.fingerprint = n.parse().unwrap_or(u32::MAX);
                false
            } else {
                true
            }
        })
        .collect();
    (rest.join(" "), versions)
}

/// Claims `wanted` as index `name`'s layout, or joins the index if its layout is `wanted`
/// or differs only by an older record format or fingerprint version this build reads
/// (raising them to this build's); refuses in one line otherwise.
pub(super) fn claim(cluster: &Cluster, name: &str, wanted: &str) -> Result<(), ClusterError> {
    let key = format!("{name}:nd:layout");
    let mut stored: String = cluster.with(|con| {
        redis::cmd("SET")
            .arg(&key)
            .arg(wanted)
            .arg("NX")
            .exec(con)?;
        redis::cmd("GET").arg(&key).query(con)
    })?;
    loop {
        if stored == wanted {
            return Ok(());
        }
        let (settings, versions) = split(&stored);
        if settings != split(wanted).0 || !versions.readable() {
            return Err(cluster.state_error(format!(
                "near-duplicate index `{name}` was created as {stored}; this worker asks for \
                 {wanted}: give every worker the same dedup settings and version"
            )));
        }
        let raised: i64 = cluster.with(|con| {
            redis::cmd("EVAL")
                .arg(RAISE)
                .arg(1)
                .arg(&key)
                .arg(&stored)
                .arg(wanted)
                .query(con)
        })?;
        if raised == 1 {
            if versions.records < INDEX_FORMAT_VERSION {
                tracing::warn!(
                    "near-duplicate index `{name}`: record format raised from {} to \
                     {INDEX_FORMAT_VERSION}; workers of older builds are refused from now on",
                    versions.records
                );
            }
            if versions.fingerprint < FINGERPRINT_VERSION {
                tracing::warn!(
                    "near-duplicate index `{name}`: fingerprint version {} upgraded to \
                     {FINGERPRINT_VERSION}: {}; workers of older builds are refused from now on",
                    versions.fingerprint,
                    crate::fingerprint::UPGRADE_NOTE
                );
            }
            return Ok(());
        }
        // Another worker changed it meanwhile: judge what it wrote.
        stored = cluster.with(|con| redis::cmd("GET").arg(&key).query(con))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_names_its_record_format_and_one_without_is_of_format_9() {
        let new = layout("fingerprint=3 k=3 blocks=6", Some(60));
        assert_eq!(
            new,
            format!("fingerprint=3 k=3 blocks=6 records={INDEX_FORMAT_VERSION} retention=60s")
        );
        let versions = |records, fingerprint| Versions {
            records,
            fingerprint,
        };
        assert_eq!(
            split(&new),
            (
                "k=3 blocks=6 retention=60s".to_string(),
                versions(INDEX_FORMAT_VERSION, 3)
            )
        );
        assert_eq!(
            split("fingerprint=3 k=3 blocks=6 retention=60s"),
            ("k=3 blocks=6 retention=60s".to_string(), versions(9, 3))
        );
        assert_eq!(split("k=3 records=x").1, versions(u32::MAX, u32::MAX));
        assert_eq!(split("fingerprint=x k=3").1.fingerprint, u32::MAX);
    }

    #[test]
    fn the_versions_a_worker_raises_are_the_ones_it_reads() {
        let versions = |records, fingerprint| Versions {
            records,
            fingerprint,
        };
        assert!(versions(INDEX_FORMAT_VERSION, FINGERPRINT_VERSION).readable());
        assert!(versions(OLDEST_INDEX_FORMAT, OLDEST_FINGERPRINT).readable());
        assert!(!versions(INDEX_FORMAT_VERSION + 1, FINGERPRINT_VERSION).readable());
        assert!(!versions(INDEX_FORMAT_VERSION, FINGERPRINT_VERSION + 1).readable());
        assert!(!versions(OLDEST_INDEX_FORMAT - 1, FINGERPRINT_VERSION).readable());
        assert!(!versions(INDEX_FORMAT_VERSION, OLDEST_FINGERPRINT - 1).readable());
    }
}
