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

use super::super::filter::{Cluster, ClusterError};
use crate::index::{INDEX_FORMAT_VERSION, OLDEST_INDEX_FORMAT};

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

/// A layout without its record format, and that format.
fn split(layout: &str) -> (String, u32) {
    let mut format = FORMAT_BEFORE_NAMED;
    let rest: Vec<&str> = layout
        .split(' ')
        .filter(|part| match part.strip_prefix("records=") {
            Some(n) => {
                // A format that does not parse is none this build reads.
                format = n.parse().unwrap_or(u32::MAX);
                false
            }
            None => true,
        })
        .collect();
    (rest.join(" "), format)
}

/// Claims `wanted` as index `name`'s layout, or joins the index if its layout is `wanted`
/// or differs only by an older record format this build reads (raising it to this
/// build's); refuses in one line otherwise.
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
        let (settings, format) = split(&stored);
        let readable = (OLDEST_INDEX_FORMAT..INDEX_FORMAT_VERSION).contains(&format);
        if settings != split(wanted).0 || !readable {
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
            tracing::warn!(
                "near-duplicate index `{name}`: record format raised from {format} to \
                 {INDEX_FORMAT_VERSION}; workers of older builds are refused from now on"
            );
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
        assert_eq!(
            split(&new),
            (
                "fingerprint=3 k=3 blocks=6 retention=60s".to_string(),
                INDEX_FORMAT_VERSION
            )
        );
        assert_eq!(
            split("fingerprint=3 k=3 blocks=6 retention=60s"),
            ("fingerprint=3 k=3 blocks=6 retention=60s".to_string(), 9)
        );
        assert_eq!(split("k=3 records=x").1, u32::MAX);
    }
}
