//! `WARC-Date` values that the `warc` crate's parser refuses (it takes RFC 3339 alone),
//! rewritten so that their record is read: WARC/0.18 writers' offsets without a colon,
//! ARC-style 14-digit timestamps, and dates that are no date.

use warc::WarcReader;

/// `record` (a record and what follows it) with its `WARC-Date` written as RFC 3339, and
/// what was changed; `None` when it has no such line to rewrite. A numeric UTC offset
/// without its colon (`-0800`) gets one, a 14-digit timestamp (`20090305084319`, as ARC
/// files and WARC/0.17 writers have it) is spelt out, and anything else that is not a date
/// is read as the epoch (the date decides nothing here).
pub fn with_iso_date(record: &[u8]) -> Option<(Vec<u8>, String)> {
    let head_end = record.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&record[..head_end]).ok()?;
    let (line_start, line) = head
        .split("\r\n")
        .scan(0usize, |at, line| {
            let start = *at;
            *at += line.len() + 2;
            Some((start, line))
        })
        .find(|(_, line)| {
            line.split_once(':')
                .is_some_and(|(key, _)| key.trim().eq_ignore_ascii_case("warc-date"))
        })?;
    let value = line.split_once(':')?.1.trim();
    let bytes = value.as_bytes();
    let iso = if bytes.len() == 14 && bytes.iter().all(u8::is_ascii_digit) {
        format!(
            "{}-{}-{}T{}:{}:{}Z",
            &value[..4],
            &value[4..6],
            &value[6..8],
            &value[8..10],
            &value[10..12],
            &value[12..14]
        )
    } else {
        let n = bytes.len();
        let offset_without_colon = n > 5
            && matches!(bytes[n - 5], b'+' | b'-')
            && bytes[n - 4..].iter().all(u8::is_ascii_digit);
        let with_colon = offset_without_colon
            .then(|| format!("{}:{}", &value[..n - 2], &value[n - 2..]))
            .filter(|v| chrono_like_rfc3339(v));
        with_colon.unwrap_or_else(|| "1970-01-01T00:00:00Z".to_string())
    };
    let problem = format!(
        "a WARC-Date `{}` that is not RFC 3339: read as {iso}",
        super::printable_line(value, 40)
    );
    let fixed = [
        &record[..line_start],
        format!("WARC-Date: {iso}").as_bytes(),
        &record[line_start + line.len()..],
    ]
    .concat();
    Some((fixed, problem))
}

/// Whether the `warc` crate reads `date` as a `WARC-Date`.
fn chrono_like_rfc3339(date: &str) -> bool {
    let record = format!(
        "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:x>\r\nWARC-Date: {date}\r\n\
         Content-Length: 0\r\n\r\n\r\n\r\n"
    );
    matches!(
        WarcReader::new(record.as_bytes()).iter_records().next(),
        Some(Ok(_))
    )
}
