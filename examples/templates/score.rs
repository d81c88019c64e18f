//! Extraction scored against the article each page carries: the F1 of the text a tool
//! extracted, by words in English and Korean and by character bigrams in Chinese and Japanese (the
//! units of the held-out figures), averaged over the pages of each language.

use std::collections::{BTreeMap, HashMap};

use super::Page;

/// The units a text is scored by: lower-case words of letters and digits where `spaced`,
/// else the bigrams of its characters that are neither space nor punctuation.
fn units(text: &str, spaced: bool) -> HashMap<String, usize> {
    let mut bag = HashMap::new();
    if spaced {
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            *bag.entry(word.to_lowercase()).or_default() += 1;
        }
    } else {
        let chars: Vec<char> = text.chars().filter(|c| c.is_alphanumeric()).collect();
        for pair in chars.windows(2) {
            *bag.entry(pair.iter().collect::<String>()).or_default() += 1;
        }
    }
    bag
}

/// The F1 of `extracted` against `truth`, over their bags of units (1 when both are empty).
pub fn f1(extracted: &str, truth: &str, spaced: bool) -> f64 {
    let (got, want) = (units(extracted, spaced), units(truth, spaced));
    let (got_n, want_n) = (got.values().sum::<usize>(), want.values().sum::<usize>());
    if got_n == 0 || want_n == 0 {
        return f64::from(u8::from(got_n == want_n));
    }
    let common: usize = got
        .iter()
        .map(|(u, n)| (*n).min(want.get(u).copied().unwrap_or(0)))
        .sum();
    let (p, r) = (common as f64 / got_n as f64, common as f64 / want_n as f64);
    if common == 0 {
        0.0
    } else {
        2.0 * p * r / (p + r)
    }
}

/// Mean F1 by language.
#[derive(Default)]
pub struct Scores(BTreeMap<String, (f64, usize)>);

impl Scores {
    /// Adds one page of `lang`.
    pub fn add(&mut self, lang: &str, f1: f64) {
        let entry = self.0.entry(lang.to_string()).or_default();
        entry.0 += f1;
        entry.1 += 1;
    }

    /// "En 0.912 (2922 pages), Ja ...".
    pub fn summary(&self) -> String {
        self.0
            .iter()
            .map(|(lang, (sum, n))| format!("{lang} {:.3} ({n} pages)", sum / *n as f64))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Page {
    /// What its extraction score is reported under: its site, or its language for the
    /// one-page templates.
    pub fn score_part(&self) -> String {
        if self.set.starts_with("one-page") {
            format!("{:?}", self.lang)
        } else {
            self.set.clone()
        }
    }

    /// The F1 of `extracted` against the page's article ([`f1`]).
    pub fn f1(&self, extracted: &str) -> f64 {
        f1(extracted, &self.truth, self.lang.spaced())
    }
}

/// A page's article as it was put in: its headline, then its paragraphs.
pub fn truth(title: &str, paragraphs: &[String]) -> String {
    std::iter::once(title)
        .chain(paragraphs.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}
