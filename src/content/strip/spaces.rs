//! Whitespace between tags, collapsed before parsing. Pages are indented: a run of line
//! breaks and spaces stands between most tags, and the parser takes each through its
//! tokenizer (a line break ends a text token) and its tree builder into text nodes, which
//! the extraction then reads as one space. The scan writes each run of two or more HTML
//! whitespace bytes (tab, line feed, form feed, carriage return, space) that starts or ends
//! a text it keeps as one byte: a line feed where the run holds a line break, else a space.
//! Runs inside a text (a paragraph wrapped in the source) are left: finding them would
//! mean reading every byte of the text again, for little.
//!
//! What the parser builds from that is the same tree with shorter texts. A run stays
//! whitespace and stays non-empty, and those are all that the tree builder asks of it. The
//! exceptions are preformatted elements, whose whitespace is their text, and the line
//! feed the tree builder drops right after a `pre`, `listing` or `textarea` start tag. So
//! the scan stops collapsing at the first `pre` or `listing` start tag, for the rest of the
//! input. Text written before that tag never ends up inside the element: the tree builder
//! moves nodes into an element only from after its start tag. `textarea`, `xmp` and the
//! other bodies the tokenizer reads as text are skipped whole by the scan, and `plaintext`
//! ends it. Everything else the extraction reads of a text (its words, its characters that
//! are not whitespace, its rendered form) takes a run of whitespace as one space. A vertical
//! tab is whitespace to the extraction but text to the tree builder, so it is left alone.

use crate::text::{HIGH_BITS, in_range};

/// Whether the scan still collapses whitespace.
pub(super) struct Spaces {
    on: bool,
}

impl Spaces {
    /// `on`: collapse until a preformatted element starts.
    pub(super) fn new(on: bool) -> Spaces {
        Spaces { on }
    }

    /// Tells of a start tag the scan keeps, by its name: after `pre` or `listing`,
    /// whitespace is left as it is.
    #[inline(never)]
    pub(super) fn start_tag(&mut self, name: &[u8]) {
        // By the first byte, then the length: this is asked of every tag. Not inlined:
        // inlined, it made the scan's other comparisons of names take 40 M instructions
        // more over 300 pages (`examples/extract_pass.rs`), from what the compiler did
        // with them.
        let preformatted = match name {
            [b'p' | b'P', ..] => name.eq_ignore_ascii_case(b"pre"),
            [b'l' | b'L', ..] => name.eq_ignore_ascii_case(b"listing"),
            _ => false,
        };
        self.on &= !preformatted;
    }

    /// Collapses the whitespace runs of `html[from..to]`, a text the scan keeps, whose
    /// bytes before `*copied` are written: what comes before a run is written to `out`,
    /// then the run's one byte, and `*copied` moves past the run.
    #[inline]
    pub(super) fn text(
        &self,
        out: &mut String,
        html: &str,
        copied: &mut usize,
        from: usize,
        to: usize,
    ) {
        if !self.on {
            return;
        }
        let bytes = html.as_bytes();
        // The run that starts the text, and the one that ends it.
        let (start, line_break) = leading_run(&bytes[..to], from);
        if start - from >= 2 {
            out.push_str(&html[*copied..from]);
            out.push(if line_break { '\n' } else { ' ' });
            *copied = start;
        }
        if start == to {
            return;
        }
        let (end, line_break) = trailing_run(bytes, start, to);
        if to - end >= 2 {
            out.push_str(&html[*copied..end]);
            out.push(if line_break { '\n' } else { ' ' });
            *copied = to;
        }
    }
}

/// Whitespace to the HTML tokenizer.
fn is_html_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// For eight bytes in a word (first byte lowest): the high bit of each that is HTML
/// whitespace.
#[inline(always)]
fn html_spaces(x: u64) -> u64 {
    let y = x & !HIGH_BITS;
    let controls = in_range(y, 0x09, 0x0e) & !in_range(y, 0x0b, 0x0c);
    (controls | in_range(y, 0x20, 0x21)) & !x
}

/// Where the run of HTML whitespace that starts at `from` ends, and whether it holds a
/// line break: eight bytes at a time, then byte by byte.
#[inline]
fn leading_run(bytes: &[u8], from: usize) -> (usize, bool) {
    let mut at = from;
    let mut line_break = false;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let spaces = html_spaces(x);
        let y = x & !HIGH_BITS;
        let breaks = (in_range(y, 0x0a, 0x0b) | in_range(y, 0x0d, 0x0e)) & !x;
        let len = (!spaces & HIGH_BITS).trailing_zeros() / 8;
        let in_run = u64::MAX.checked_shl(len * 8).map_or(u64::MAX, |rest| !rest);
        line_break |= breaks & in_run != 0;
        at += len as usize;
        if len < 8 {
            return (at, line_break);
        }
    }
    while let Some(&b) = bytes.get(at).filter(|&&b| is_html_space(b)) {
        line_break |= is_line_break(b);
        at += 1;
    }
    (at, line_break)
}

/// Where the run of HTML whitespace that ends at `to` starts (at `from` at the earliest),
/// and whether it holds a line break: byte by byte, from the end (the run that ends a text
/// is mostly a line break and some indentation).
#[inline]
fn trailing_run(bytes: &[u8], from: usize, to: usize) -> (usize, bool) {
    let mut start = to;
    let mut line_break = false;
    while start > from && is_html_space(bytes[start - 1]) {
        line_break |= is_line_break(bytes[start - 1]);
        start -= 1;
    }
    (start, line_break)
}

/// A line feed or a carriage return.
fn is_line_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collapsed(text: &str) -> String {
        let mut out = String::new();
        let mut copied = 0;
        Spaces::new(true).text(&mut out, text, &mut copied, 0, text.len());
        out.push_str(&text[copied..]);
        out
    }

    #[test]
    fn runs_at_either_end_become_one_byte() {
        assert_eq!(collapsed("\n    "), "\n");
        assert_eq!(collapsed("   "), " ");
        assert_eq!(collapsed("\n\t\tText here\n\t"), "\nText here\n");
        assert_eq!(collapsed(" \t\x0c a  b \r"), " a  b\n");
        assert_eq!(collapsed("a \t\r\n  "), "a\n");
        // One byte is left as it is, and so is a vertical tab, which is text to the tree
        // builder, and whitespace beyond ASCII.
        assert_eq!(collapsed("\ta\r"), "\ta\r");
        assert_eq!(collapsed("\x0b\x0b b"), "\x0b\x0b b");
        assert_eq!(collapsed(" \u{a0} "), " \u{a0} ");
        // Runs across the eight-byte words.
        for len in 0..20 {
            let run = format!("{}\n{}", " ".repeat(len), "\t".repeat(len));
            assert_eq!(collapsed(&format!("{run}x{run}")), "\nx\n", "{len}");
            let spaces = " ".repeat(len + 2);
            assert_eq!(collapsed(&format!("{spaces}x")), " x", "{len}");
        }
    }

    #[test]
    fn preformatted_elements_end_it() {
        let mut spaces = Spaces::new(true);
        spaces.start_tag(b"p");
        assert!(spaces.on);
        spaces.start_tag(b"PRE");
        assert!(!spaces.on);
        let mut spaces = Spaces::new(true);
        spaces.start_tag(b"Listing");
        assert!(!spaces.on);
    }

    proptest::proptest! {
        #[test]
        fn the_eight_byte_run_is_the_byte_loop_run(
            text in "[ \t\n\r\x0b\x0cab]{0,40}",
            from in 0usize..40,
        ) {
            let bytes = text.as_bytes();
            let from = from.min(bytes.len());
            let end = (from..bytes.len()).find(|&i| !is_html_space(bytes[i])).unwrap_or(bytes.len());
            let line_break = bytes[from..end].iter().any(|&b| b == b'\n' || b == b'\r');
            proptest::prop_assert_eq!(leading_run(bytes, from), (end, line_break));
        }
    }
}
