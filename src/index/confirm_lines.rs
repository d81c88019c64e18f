//! The line rules of [`Confirm`](super::Confirm) for small pages and for candidates no key
//! found: whether two tiny pages of one host differ only by a sentence appended
//! ([`tiny_lines_edited`]), and whether two pages of one host share a sentence as it is
//! ([`shares_sentence`]).

use super::{ADDED_WORDS, OWN_WORDS};
use crate::fingerprint::blocks::{Blocks, Line};
use crate::index::DocRecord;

/// Whether two pages of one host share a sentence (a line of
/// [`LONG_LINE_WORDS`](crate::fingerprint::blocks::LONG_LINE_WORDS) words or more) as it
/// is, outside the host's template (`template`, sorted): what makes a page of the host that
/// no key found a candidate ([`Probe::recent`](crate::index::Probe::recent)).
pub(super) fn shares_sentence(new: &DocRecord, stored: &DocRecord, template: &[u32]) -> bool {
    let (Some(a), Some(b)) = (&new.blocks, &stored.blocks) else {
        return false;
    };
    if a.host != b.host {
        return false;
    }
    let mut keys: Vec<u32> = b
        .lines
        .iter()
        .filter(|l| l.is_long())
        .map(|l| l.key)
        .collect();
    keys.sort_unstable();
    a.lines.iter().any(|l| {
        l.is_long() && keys.binary_search(&l.key).is_ok() && template.binary_search(&l.key).is_err()
    })
}

/// Words a line must grow by, at least, to be a sentence appended to it
/// ([`tiny_lines_edited`]): more than a name or a number changed in it.
pub const APPENDED_WORDS: u8 = 5;

/// Whether two tiny pages of one host (`new` and `stored`, their host's template keys
/// sorted in `template`) differ only by a sentence added: every line that one has and the
/// other has not, as it is, is a sentence ([`Line::is_long`]) that is a line of the other
/// with [`APPENDED_WORDS`] to [`ADDED_WORDS`] words appended (near it, [`Line::is_near`],
/// with the same first words; or, when `held_whole` says the two pages' exact shingle
/// sets hold every shingle of the smaller in the larger ([`super::tiny_likeness`]), with
/// the same first words alone: a sentence as long as the line before it moves the line's
/// signature far, and the sets already show the line whole in the grown one), or is the
/// other's so grown, but for at most [`OWN_WORDS`] words of sentences on one side (a
/// sentence added as a paragraph of its own); and at
/// least one line is so grown. Pages whose lines differ in their numbers only (a line's
/// key reads every run of digits as one: the months of a calendar) are left to the tiny
/// rule's exact sets. A brief's
/// page with a sentence added to its paragraph, beside a headline that extraction took on
/// one page and not the other, is then its copy. A short line that differs (a product's
/// name, its price, a headline of a few words) makes another page, and so does a sentence
/// with words changed in it (an event's name in "Join us for ... at the Harbour Hall"):
/// such pages are told apart by exactly that. The line rule, which leaves short lines out
/// of a page's own, is not used for them ([`Confirm::judge_pages`](super::Confirm::judge_pages)).
pub fn tiny_lines_edited(
    new: &Blocks,
    stored: &Blocks,
    template: &[u32],
    held_whole: bool,
) -> bool {
    let covers = (new.coverage(), stored.coverage());
    let lines = |b: &Blocks| -> Vec<Line> {
        b.lines
            .iter()
            .filter(|l| covers.0.covers(l) && covers.1.covers(l))
            .filter(|l| template.binary_search(&l.key).is_err())
            .copied()
            .collect()
    };
    let (new_lines, stored_lines) = (lines(new), lines(stored));
    let keys = |lines: &[Line]| {
        let mut keys: Vec<u32> = lines.iter().map(|l| l.key).collect();
        keys.sort_unstable();
        keys
    };
    let (new_keys, stored_keys) = (keys(&new_lines), keys(&stored_lines));
    if new.legacy != stored.legacy {
        return false;
    }
    // `long` is `short` with a sentence appended.
    let appended = |long: &Line, short: &Line| {
        (held_whole || long.is_near(short))
            && long.ends & 0xffff == short.ends & 0xffff
            && (short.words.saturating_add(APPENDED_WORDS)
                ..=short.words.saturating_add(ADDED_WORDS.min(255) as u8))
                .contains(&long.words)
    };
    // Its words in sentences of its own, and its lines that are a line of the other grown
    // or shrunk by a sentence; None when a short line differs.
    let own = |lines: &[Line], other_keys: &[u32], other: &[Line]| -> Option<(u32, usize)> {
        let (mut own, mut grown) = (0, 0);
        for line in lines
            .iter()
            .filter(|l| other_keys.binary_search(&l.key).is_err())
        {
            if !line.is_long() {
                return None;
            }
            if other.iter().any(|o| appended(line, o) || appended(o, line)) {
                grown += 1;
            } else {
                own += u32::from(line.words);
            }
        }
        Some((own, grown))
    };
    let new_own = own(&new_lines, &stored_keys, &stored_lines);
    let stored_own = own(&stored_lines, &new_keys, &new_lines);
    // A sentence appended to a line of one of them (two pages alike in every line's words
    // but their numbers, months of a calendar, are the tiny rule's to tell apart), and
    // nothing else of its own on both sides (two headlines of a few words, when extraction
    // lost both bodies).
    matches!((new_own, stored_own),
        (Some((a, grown)), Some((b, _))) if grown > 0 && a.max(b) <= OWN_WORDS && a.min(b) == 0)
}
