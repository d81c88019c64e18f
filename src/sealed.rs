//! Small text files that check themselves: a header line, one `key value` per line, and a
//! last line `check` with the xxh3 of everything before it. An operator reads them with
//! `cat`; a changed or cut byte anywhere is found. The index manifest and the state
//! directory's ledger are written this way.

use xxhash_rust::xxh3::xxh3_64;

/// `body` (its lines, each ending in a line feed) with its check line after it.
pub(crate) fn seal(body: &str) -> String {
    format!("{body}check {:016x}\n", xxh3_64(body.as_bytes()))
}

/// The fields of a sealed text, read in order.
pub(crate) struct Fields<'a>(std::str::Lines<'a>);

/// Checks `bytes` and its first line, `header`; `what` names the kind of file in the error.
pub(crate) fn open<'a>(bytes: &'a [u8], header: &str, what: &str) -> Result<Fields<'a>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not text: damaged".to_string())?;
    let check_at = text
        .rfind("check ")
        .ok_or("no check line: damaged or truncated")?;
    let (body, check) = text.split_at(check_at);
    let check = check
        .strip_suffix('\n')
        .ok_or("no end of line after the check: truncated")?
        .strip_prefix("check ")
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .ok_or("unreadable check line: damaged")?;
    if check != xxh3_64(body.as_bytes()) {
        return Err("checksum mismatch: damaged".into());
    }
    let mut lines = body.lines();
    if lines.next() != Some(header) {
        return Err(format!("not a {what}"));
    }
    Ok(Fields(lines))
}

impl<'a> Fields<'a> {
    /// The value of the next line, which must be `name`'s.
    pub(crate) fn text(&mut self, name: &str) -> Result<&'a str, String> {
        self.0
            .next()
            .and_then(|l| l.strip_prefix(name))
            .and_then(|l| l.strip_prefix(' '))
            .ok_or_else(|| format!("missing `{name}`"))
    }

    /// The next line's value as a number.
    pub(crate) fn number(&mut self, name: &str) -> Result<u64, String> {
        let value = self.text(name)?;
        value
            .parse::<u64>()
            .map_err(|_| format!("unreadable `{name}`: {value}"))
    }

    /// The next line's value as hexadecimal digits.
    pub(crate) fn hex(&mut self, name: &str) -> Result<u128, String> {
        let value = self.text(name)?;
        u128::from_str_radix(value, 16).map_err(|_| format!("unreadable `{name}`: {value}"))
    }

    /// Whether lines are left.
    pub(crate) fn is_done(&mut self) -> bool {
        self.0.clone().next().is_none()
    }
}
