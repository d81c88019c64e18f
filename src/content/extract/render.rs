//! Writing the kept content as structured text, and the clean-ups after it.

use super::tree::Tag;
use crate::content::extract::BlockKind;
use crate::text::space_len_at;
use regex::Regex;
use std::sync::LazyLock;

#[derive(Default)]
pub(super) struct Writer {
    pub(super) out: String,
    /// 0: nothing pending, 1: a line break, 2: a blank line.
    pub(super) pending_break: u8,
    pub(super) pending_space: bool,
    pub(super) pending_prefix: Option<String>,
    pub(super) preformatted: u32,
    pub(super) cells_in_row: u32,
}

/// True when `text` is ASCII whose only whitespace is single spaces (three vectorized scans,
/// where the general path looks at every byte in turn).
pub(super) fn is_plain_spaced(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.is_ascii()
        && !bytes.iter().any(|&b| matches!(b, b'\t'..=b'\r'))
        && memchr::memmem::find(bytes, b"  ").is_none()
}

/// Whether a whitespace character starts at byte `i` of `text`.
#[inline]
pub(super) fn starts_space(text: &str, i: usize) -> bool {
    space_len_at(text, i) != 0
}

impl Writer {
    pub(super) fn text(&mut self, text: &str) {
        if self.preformatted > 0 {
            if !text.is_empty() {
                self.flush_pending();
                self.out.push_str(text);
            }
            return;
        }
        if is_plain_spaced(text) {
            // ASCII words separated by single spaces: copied at once, with the spaces at
            // either end becoming pending spaces.
            let trimmed = text.trim_matches(' ');
            if text.starts_with(' ') {
                self.pending_space = true;
            }
            if !trimmed.is_empty() {
                self.flush_pending();
                self.out.push_str(trimmed);
                if text.ends_with(' ') {
                    self.pending_space = true;
                }
            }
            return;
        }
        // Whitespace runs become one pending space. Words already separated by one plain
        // space (most of any text) are copied as one run.
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < text.len() {
            let spaces = i;
            while i < text.len() {
                match space_len_at(text, i) {
                    0 => break,
                    n => i += n,
                }
            }
            if i > spaces {
                self.pending_space = true;
            }
            let run = i;
            loop {
                while i < text.len() && !starts_space(text, i) {
                    i += 1;
                }
                let single_space =
                    bytes.get(i) == Some(&b' ') && i + 1 < text.len() && !starts_space(text, i + 1);
                if !single_space {
                    break;
                }
                i += 1;
            }
            if i > run {
                self.flush_pending();
                self.out.push_str(&text[run..i]);
            }
        }
    }

    pub(super) fn flush_pending(&mut self) {
        if self.out.is_empty() {
            self.pending_break = 0;
            self.pending_space = false;
        } else if self.pending_break > 0 {
            self.out.push_str(if self.pending_break >= 2 {
                "\n\n"
            } else {
                "\n"
            });
            self.pending_break = 0;
            self.pending_space = false;
        } else if self.pending_space {
            self.out.push(' ');
            self.pending_space = false;
        }
        if let Some(prefix) = self.pending_prefix.take() {
            self.out.push_str(&prefix);
        }
    }

    pub(super) fn request_break(&mut self, lines: u8) {
        self.pending_break = self.pending_break.max(lines);
        self.pending_space = false;
    }

    pub(super) fn open(&mut self, tag: Tag, ordinal: i32) {
        match tag {
            Tag::P
            | Tag::H(_)
            | Tag::Table
            | Tag::Blockquote
            | Tag::Figure
            | Tag::Ul
            | Tag::Ol
            | Tag::Dl
            | Tag::Section
            | Tag::Article
            | Tag::Main
            | Tag::Header
            | Tag::Footer
            | Tag::Nav
            | Tag::Aside
            | Tag::Form
            | Tag::Hr => self.request_break(2),
            Tag::Pre => {
                self.request_break(2);
                self.preformatted += 1;
            }
            Tag::Li => {
                self.request_break(1);
                self.pending_prefix = Some(if ordinal > 0 {
                    format!("{ordinal}. ")
                } else {
                    "- ".to_string()
                });
            }
            Tag::Tr => {
                self.request_break(1);
                self.cells_in_row = 0;
            }
            Tag::Cell => {
                if self.cells_in_row > 0 && self.pending_break == 0 {
                    self.pending_prefix = Some("| ".to_string());
                    self.pending_space = true;
                }
                self.cells_in_row += 1;
            }
            Tag::Block | Tag::Dt | Tag::Dd | Tag::Caption | Tag::Br | Tag::Body => {
                self.request_break(1)
            }
            Tag::Text | Tag::Inline | Tag::Strong | Tag::A | Tag::Button => {}
        }
    }

    pub(super) fn close(&mut self, tag: Tag) {
        match tag {
            Tag::Pre => {
                self.preformatted = self.preformatted.saturating_sub(1);
                self.request_break(2);
            }
            Tag::Cell => {
                // A cell with no text does not leave its separator behind.
                if self.pending_prefix.as_deref() == Some("| ") {
                    self.pending_prefix = None;
                }
            }
            Tag::Li => {
                if self.pending_prefix.is_some() {
                    self.pending_prefix = None;
                }
                self.request_break(1);
            }
            other if other.is_heading() => self.request_break(2),
            other => self.open(other, -1),
        }
    }

    pub(super) fn finish(mut self) -> String {
        let trimmed = self.out.trim_end().len();
        self.out.truncate(trimmed);
        drop_metadata_lines(drop_repeated_lines(drop_repeated_blocks(self.out)))
    }

    /// [`Writer::finish`], with the kind of each block of the finished text, given where
    /// blocks of each kind started in the output (`marks`, in order).
    pub(super) fn finish_with_kinds(
        self,
        marks: &[(usize, BlockKind)],
    ) -> (String, Vec<BlockKind>) {
        // Each block of the text before the finishing passes, with its kind: the kind of
        // the last mark at or before its start.
        let mut before: Vec<(&str, BlockKind)> = Vec::new();
        let raw = self.out.clone();
        let mut offset = 0;
        let mut mark = 0;
        let mut kind = BlockKind::Story;
        for block in raw.split("\n\n") {
            let start = offset;
            offset += block.len() + 2;
            while mark < marks.len()
                && marks[mark].0 <= start + block.len() - block.trim_start().len()
            {
                kind = marks[mark].1;
                mark += 1;
            }
            if !block.trim().is_empty() {
                before.push((block, kind));
            }
        }
        let text = self.finish();
        // The finishing passes drop lines and blocks but keep the order: each finished
        // block is found among the earlier ones by its first line.
        let mut kinds = Vec::new();
        let mut j = 0;
        for block in text.split("\n\n") {
            let first = block.lines().next().unwrap_or("").trim();
            match before[j..].iter().position(|(b, _)| b.contains(first)) {
                Some(k) => {
                    j += k;
                    kinds.push(before[j].1);
                }
                None => kinds.push(BlockKind::Story),
            }
        }
        (text, kinds)
    }
}

/// The lines of `text` without those `dropped` names (given each line and its trimmed
/// text, in order), blank lines kept where they separated what is left; `None` when no line
/// is dropped. Nothing is copied until a line is dropped (most texts lose none).
pub(super) fn drop_lines<'a>(
    text: &'a str,
    mut dropped: impl FnMut(&'a str, &'a str) -> bool,
) -> Option<String> {
    let mut out: Option<String> = None;
    let mut blank = false; // a blank line is due before the next line written
    let mut start = 0;
    for line in text.split('\n') {
        let line_start = start;
        start += line.len() + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            if let Some(out) = &out {
                blank = !out.is_empty();
            }
            continue;
        }
        if dropped(line, trimmed) {
            if out.is_none() {
                // Every line before this one is kept: written now, as the loop below would
                // have written them.
                let mut kept = String::with_capacity(text.len());
                blank = false;
                for line in text[..line_start.saturating_sub(1)].split('\n') {
                    push_kept_line(&mut kept, &mut blank, line);
                }
                out = Some(kept);
            }
            continue;
        }
        if let Some(out) = &mut out {
            push_kept_line(out, &mut blank, line);
        }
    }
    out
}

/// Appends a kept `line` to `out`, after one blank line when blank lines came before it
/// (`blank`, which a blank line sets and a written line clears).
pub(super) fn push_kept_line(out: &mut String, blank: &mut bool, line: &str) {
    if line.trim().is_empty() {
        *blank = !out.is_empty();
        return;
    }
    if !out.is_empty() {
        out.push_str(if *blank { "\n\n" } else { "\n" });
    }
    out.push_str(line);
    *blank = false;
}

/// Lines this long or longer are never taken for article metadata.
pub(super) const METADATA_LINE_CHARS: usize = 60;

/// Whether a line is article metadata rather than content: only a date ("March 3, 2026",
/// "3 Mar 2026", "2026-03-03", "3. März 2026", "03.03.2026 | 14:32 Uhr", "3 de marzo de
/// 2026"), only a clock time or a video's length ("3:59 PM", "17:42 Uhr", "1:41"), a
/// reading time ("5 min read", "5 Minuten Lesezeit", "Ten tekst przeczytasz w mniej niż
/// minutę"), or a publication stamp ("Updated on March 3, 2026", "Posted: 03/03/2026",
/// "Aktualisiert am 03.03.2026"). A date inside a sentence, a table row or a list of events
/// with their titles is content and stays.
pub(super) fn is_metadata_line(trimmed: &str) -> bool {
    static PATTERNS: LazyLock<[Regex; 4]> = LazyLock::new(|| {
        // English month names and the German, French and Spanish ones that differ.
        const MONTH: &str = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|märz|mai|okt|dez|janv|févr|mars|avr|juil|août|déc|ene|abr|ago|dic)[a-zéû]*\.?";
        const TIME: &str = r"(,?\s*(\|\s*)?(um\s+)?\d{1,2}[:.]\d{2}(\s*(uhr|h|am|pm))?)?";
        [
            format!(
                r"(?i)^(-\s*)?(({MONTH}\s+\d{{1,2}},?\s+\d{{4}})|(\d{{1,2}}\.?\s+(de\s+)?{MONTH},?\s+(de\s+)?\d{{4}})|(\d{{4}}-\d{{2}}-\d{{2}})|(\d{{1,2}}\.\d{{1,2}}\.\d{{4}})){TIME}\.?$"
            ),
            r"(?i)^\d+\s*(min|minute|minuten)s?\.?\s*(read|lesezeit|de lecture)\.?$".to_string(),
            r"(?i)^(updated|published|posted|aktualisiert|veröffentlicht|erstellt|stand|publié|mis à jour|publicado|actualizado)( on| am| le| el)?:?\s+.{0,40}\d{4}.{0,12}$".to_string(),
            r"(?i)^\d{1,2}:\d{2}\s*(am|pm|a\.m\.|p\.m\.|uhr|h)?$".to_string(),
        ]
        .map(|p| Regex::new(&p).expect("the metadata patterns are valid"))
    });
    // A reading time in words, in Polish ("in less than a minute").
    static READING: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^(ten tekst przeczytasz w .{0,30}|czas czytania:? .{0,20})$")
            .expect("the reading-time pattern is valid")
    });
    if trimmed.len() >= METADATA_LINE_CHARS {
        return false;
    }
    if !trimmed.bytes().any(|b| b.is_ascii_digit()) {
        return trimmed.starts_with(['T', 't', 'C', 'c']) && READING.is_match(trimmed);
    }
    PATTERNS.iter().any(|p| p.is_match(trimmed))
}

/// Lines this long or longer are never taken for a post's filing line.
pub(super) const FILING_LINE_CHARS: usize = 250;

/// Whether a line files the post rather than saying anything: its tags or topics
/// ("Tags: harbour, ferries", "Themen: Ehrenamt Jugendverbände", "Schlagwörter: ..."), where
/// a blog engine filed it ("This entry was posted in News. Bookmark the permalink.",
/// "Dieser Eintrag wurde veröffentlicht in Podcast und verschlagwortet mit ..."), or a
/// pingback from another blog ("1. Pingback von ... | 11.09.2011 23:31"). Each names itself
/// in its first words; the same words inside a sentence are content.
pub(super) fn is_filing_line(trimmed: &str) -> bool {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?i)^(",
            // A label and a colon.
            r"(tags|tagged|topics|filed under|categories|category|themen|schlagwörter|",
            r"schlagworte|stichwörter|stichworte|kategorien|kategorie|étiquettes|mots-clés|",
            r"catégories|etiquetas|categorías|temas|tagi|tematy)\s*:",
            // A blog engine's sentence.
            r"|this (entry|post) was posted\b|posted in\b|dieser (eintrag|beitrag|artikel) ",
            r"wurde\b.*\b(veröffentlicht|abgelegt)\b|ce (billet|article) a été publié\b",
            r"|esta entrada fue publicada\b",
            // A pingback or trackback, numbered or not.
            r"|(\d+\.\s*)?(pingback|trackback)\b)",
        ))
        .expect("the filing pattern is valid")
    });
    if trimmed.len() >= FILING_LINE_CHARS {
        return false;
    }
    // Most lines have neither a label's colon nor one of the sentences' first words: they
    // are settled without the pattern.
    let first = trimmed.split(' ').next().unwrap_or("");
    let opening = [
        "this",
        "posted",
        "dieser",
        "ce",
        "esta",
        "pingback",
        "trackback",
    ]
    .iter()
    .any(|w| first.eq_ignore_ascii_case(w))
        || first.starts_with(|c: char| c.is_ascii_digit());
    if !opening && !trimmed.contains(':') {
        return false;
    }
    PATTERN.is_match(trimmed)
}

/// Lines this long or longer are never taken for a picture credit, nor, with a credit at
/// their end, for a caption.
pub(super) const CREDIT_LINE_CHARS: usize = 80;
pub(super) const CAPTION_LINE_CHARS: usize = 300;

/// Whether a line credits a picture rather than saying anything: a credit label and a
/// name ("Foto: Ingo Pertramer", "Bild: Werk/CHRISTIAN HOUDEK", "Photo credit: ...",
/// "Titelbild:", "Quelle: Deutscher Jagdverband (DJV)"), or a line that ends in a picture
/// agency ("Augusta National/Getty Images", "ShutterStock"), or a rights notice
/// ([`is_rights_notice`]). On the boilerplate development set all 16 snippets of the first
/// two kinds are boilerplate and none is main text.
pub(super) fn is_credit_line(trimmed: &str) -> bool {
    if is_rights_notice(trimmed) {
        return true;
    }
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?i)^((foto|fotos|bild|bilder|photo|photos|image|images|picture|pictures|",
            r"credit|credits|photo credit|image credit|titelbild|titelfoto|bildquelle|",
            r"fotoquelle|bildnachweis|fotonachweis|crédit|crédits|crédit photo|quelle|",
            r"source|fuente)\s*:",
            r"|.{0,60}\b(getty images|shutterstock|istock|istockphoto|imago images|",
            r"picture alliance|picture-alliance|ap photo)\)?\.?$)",
        ))
        .expect("the credit pattern is valid")
    });
    if trimmed.len() >= CREDIT_LINE_CHARS {
        // A picture's caption that ends in its credit ("Lee Elder at the Masters in 1975. |
        // © Augusta National/Getty Images").
        return trimmed.len() < CAPTION_LINE_CHARS
            && trimmed.rsplit_once('©').is_some_and(|(_, holder)| {
                holder.len() <= 60 && !holder.contains(['.', '!', '?'])
            });
    }
    // A label's colon, or an agency's name at the end: other lines are settled without the
    // pattern.
    let tail = &trimmed.as_bytes()[trimmed.len().saturating_sub(24)..];
    let agency = [&b"images"[..], b"stock", b"alliance", b"photo"]
        .iter()
        .any(|w| tail.windows(w.len()).any(|t| t.eq_ignore_ascii_case(w)));
    if !agency && !trimmed.contains(':') {
        return false;
    }
    PATTERN.is_match(trimmed)
}

/// Lines this long (in characters) or longer end a contact block.
pub(super) const CONTACT_LINE_CHARS: usize = 80;
/// A contact block holds at most this many lines after its label.
pub(super) const CONTACT_LINES: usize = 8;

/// Whether a line labels the contact block under a press release or a story ("Kontakt:",
/// "Pressekontakt", "Media contact", "Ansprechpartnerin:"): the name, office, telephone and
/// e-mail after it are the same under every release an office sends, so they would make
/// two releases alike.
pub(super) fn is_contact_label(trimmed: &str) -> bool {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?i)^(kontakt|pressekontakt|medienkontakt|ansprechpartner(in)?|ansprechpersonen",
            r"|(kontakt )?für rückfragen|rückfragen|contact|media contacts?|press contacts?",
            r"|contact presse|contacto)\s*:?$",
        ))
        .expect("the contact pattern is valid")
    });
    trimmed.len() < 40 && PATTERN.is_match(trimmed)
}

/// Whether a line can belong to a contact block: a short line that is not a sentence (a
/// name, an office, an address), or one that holds an e-mail or web address.
pub(super) fn is_contact_line(trimmed: &str) -> bool {
    trimmed.len() < 4 * CONTACT_LINE_CHARS
        && trimmed.chars().count() < CONTACT_LINE_CHARS
        && (!trimmed.ends_with(['.', '!', '?'])
            || trimmed.contains('@')
            || trimmed.contains("www.")
            || trimmed.contains("://"))
}

/// Lines this long (in characters) or longer are never taken for a rights notice.
pub(super) const RIGHTS_LINE_CHARS: usize = 200;

/// Whether a line states who owns the page ("© 2021 Harbour Verlag AG. All Rights
/// Reserved.", "Copyright 2023, Harbour Notes", "Alle Rechte vorbehalten"): a site's
/// footer, or the notice an agency puts under every story it sells. On the boilerplate
/// development set 19 lines under 200 characters are such notices, none of them main text.
pub(super) fn is_rights_notice(trimmed: &str) -> bool {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?i)^(©|\(c\)(?-u:\s)|copyright(?-u:\s)*(©|\d{4}))",
            r"|all rights reserved|alle rechte vorbehalten|tous droits réservés",
            r"|todos los derechos reservados",
        ))
        .expect("the rights pattern is valid")
    });
    trimmed.len() < 4 * RIGHTS_LINE_CHARS
        && trimmed.chars().count() < RIGHTS_LINE_CHARS
        && PATTERN.is_match(trimmed)
}

/// Lines this long (in characters) or longer are never taken for a row of controls.
pub(super) const CONTROL_LINE_CHARS: usize = 80;

/// Whether a line is only the labels of a page's controls, one to three of them ("Weiter
/// »", "alle anzeigen", "zurück zur Listenansicht", "Rezept drucken Bei Pinterest
/// speichern", "Quellen ausblenden", "Permalink https://...", "Read more", "Print", "Show
/// all", "Imprimer", "Leer más"), or an advert's label ("- Anzeige -", "Advertisement"). A
/// button, a toggle or the label over an advert drawn as text says nothing of the article.
/// On the boilerplate development set 58 lines are such labels: 12 annotated boilerplate,
/// none main text; on WCXB dev 118 of 119 are outside the reference text.
pub(super) fn is_control_line(trimmed: &str) -> bool {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        let control = concat!(
            // Paging and showing.
            r"weiter|zurück|zurück zu[rm]? \S+|back to( the)? \S+|alle anzeigen|mehr anzeigen",
            r"|show (all|more)|load more|(\S+ )?(ausblenden|einblenden)",
            r"|mehr lesen|weiterlesen|read more|lire la suite|leer más",
            // Printing, sharing, commenting, saving.
            r"|(\S+ )?drucken|print( this)?( page| article| recipe)?|imprimer|imprimir",
            r"|teilen|share( this)?( page| article)?|partager|compartir|kommentieren",
            r"|(bei|auf) \S+ (speichern|teilen)|(permalink|permalien)( https?://\S+)?",
            r"|pdf|download( pdf)?|(\S+ ){0,3}als pdf herunterladen",
            // An advert's label.
            r"|anzeige|advertisement|werbung|sponsored|publicidad|publicité|reklama",
        );
        Regex::new(&format!(
            r"(?i)^[-–—*\[ ]*(({control})[-–—.!»›>:|/·\] ]*){{1,3}}$"
        ))
        .expect("the control pattern is valid")
    });
    trimmed.len() < 4 * CONTROL_LINE_CHARS
        && trimmed.chars().count() < CONTROL_LINE_CHARS
        && PATTERN.is_match(trimmed)
}

/// Lines this long (in characters) or longer are never taken for a call to action: a
/// paragraph of an article can ask the same as part of what it says.
pub(super) const CALL_TO_ACTION_CHARS: usize = 200;

/// Whether a line asks the reader to do something for the site rather than saying
/// anything: subscribe ("Subscribe now to our eNATION edition for the full story.",
/// "Newsletter abonnieren"), sign in ("Sie müssen sich einloggen, um ..."), download the
/// site's app ("... download the Nationnews apps for iOS and Android."), follow it, or
/// support it ("Unterstütze RosaMag bereits mit 2,50!"). A paywall's notice is one too
/// ("To view the full story, please subscribe ..."), and so is a plea for the reader's
/// opinion ("We want to hear what you think about this article.") or for the print issue
/// ("... im Abo, als e-Paper ..."). Sites put these under every article, so two articles
/// of one site share them. On the boilerplate development set the pattern finds 39 lines
/// under 200 characters: 19 are annotated boilerplate, 20 are not annotated and are calls
/// to action, none is main text; on WCXB dev 39 of its 49 lines are outside the reference
/// text.
pub(super) fn is_call_to_action(trimmed: &str) -> bool {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        let pattern = concat!(
            r"(?i)",
            // Subscribe, sign up, or a paywall's notice.
            r"^(subscribe|jetzt abonnieren|abonnez-vous|suscríbete)\b|^\S+ abonnieren$",
            r"|\bsubscribe (now|today)\b|\bsubscribe to (our|the|\S+ \S+ (via|on|for))\b",
            r"|\bsign up (for|to) (our|the) .{0,40}newsletter|\balready a subscriber\b",
            r"|\bsubscribers? (also )?(receive|get)\b",
            r"|\bto (view|read|continue reading) the (full|whole|rest of the) (story|article)\b",
            r"|\bnewsletter abonnieren\b|\babonniere (das|den|unseren|unsere)\b",
            r"|\binscrivez-vous à (notre|la) newsletter|\bzapisz się na newsletter",
            r"|\bnichts (neues |mehr )*(verpassen|versäumen)\b|\bstay up[- ]to[- ]date on our\b",
            r"|\bsign up (here|now|today)\b|\b(unsere[mn]?|our) \S*newsletter\b",
            // The print issue.
            r"|\b(im abo|als e-paper|am kiosk)\b",
            // A plea for the reader's opinion.
            r"|\bwe want to hear (what you think|from you)\b|\bletter to the editor\b",
            r"|\blet us know what you think\b|\bihre meinung zählt\b",
            // Sign in.
            r"|\bmüssen sie sich .{0,20}(einloggen|anmelden)\b|\b(einloggen|anmelden),? um\b",
            r"|\bhier (kostenlos )?anmelden\b",
            // The site's app.
            r"|\bdownload (the|our) .{0,40}\bapps?\b|\bwith the .{0,40} app\.?$",
            r"|\b(itunes|app store) (und|and|&|oder|or) google play\b",
            r"|\b(for ios and android|für ios und android)\b",
            r"|\btéléchargez (notre|l'application)|\bdescarga (nuestra|la) app\b",
            // Follow or support the site.
            r"|\bfollow us on\b|\bsupport (us|our (work|journalism))\b",
            r"|\bunterstütze(n sie)? (uns|unsere arbeit)\b|^unterstütze(n sie)? (?-i:\p{Lu})",
            r"|\bwesprzyj nas\b",
        )
        // ASCII word boundaries (every boundary above is beside an ASCII letter) keep the
        // search in the lazy DFA: a Unicode one sends it to the slower engines on any line
        // that is not all ASCII.
        .replace(r"\b", r"(?-u:\b)");
        Regex::new(&pattern).expect("the call-to-action pattern is valid")
    });
    trimmed.len() < 4 * CALL_TO_ACTION_CHARS
        && trimmed.chars().count() < CALL_TO_ACTION_CHARS
        && PATTERN.is_match(trimmed)
}

/// Drops the lines that are only article metadata ([`is_metadata_line`],
/// [`is_filing_line`], [`is_credit_line`]), a call to action ([`is_call_to_action`]) or a
/// row of controls ([`is_control_line`]), and the contact block under a press release
/// ([`is_contact_label`] and up to [`CONTACT_LINES`] lines after it): the date and reading
/// time under a headline, the tags under a post, the plea to subscribe, the "Print" button
/// and the press office's telephone are the page's, not the article's, and the same article
/// under another template shows them differently or not at all.
pub(super) fn drop_metadata_lines(text: String) -> String {
    // Lines of a contact block still to come, after its label.
    let mut contact = 0;
    drop_lines(&text, |_, trimmed| {
        if contact > 0 {
            if is_contact_line(trimmed) {
                contact -= 1;
                return true;
            }
            contact = 0;
        }
        if is_contact_label(trimmed) {
            contact = CONTACT_LINES;
            return true;
        }
        is_metadata_line(trimmed)
            || is_filing_line(trimmed)
            || is_credit_line(trimmed)
            || is_call_to_action(trimmed)
            || is_control_line(trimmed)
    })
    .unwrap_or(text)
}

/// Blocks at least this long that repeat an earlier block of the text are dropped.
pub(super) const REPEATED_BLOCK_CHARS: usize = 80;

/// Drops each block (the text between blank lines: a paragraph, a heading, a list, a
/// table) of [`REPEATED_BLOCK_CHARS`] or more that repeats an earlier block: pages often
/// carry the same block twice or more (a version for small screens and one for large, the
/// panels of a colour picker), which a reader sees once.
pub(super) fn drop_repeated_blocks(text: String) -> String {
    let mut seen = TextSet::default();
    let repeated = blocks(&text)
        .any(|block| block.len() >= REPEATED_BLOCK_CHARS && !seen.insert(block.trim()));
    if !repeated {
        return text;
    }
    seen.clear();
    let mut out = String::with_capacity(text.len());
    for block in blocks(&text) {
        if block.len() >= REPEATED_BLOCK_CHARS && !seen.insert(block.trim()) {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(block);
    }
    out
}

/// A set of text slices hashed with xxh3 (the texts are whole paragraphs; SipHash costs
/// several times as much on them).
pub(super) type TextSet<'a> =
    std::collections::HashSet<&'a str, xxhash_rust::xxh3::Xxh3DefaultBuilder>;

/// The pieces of `text` between occurrences of "\n\n", as `text.split("\n\n")` gives them.
pub(super) fn blocks(text: &str) -> impl Iterator<Item = &str> {
    static FINDER: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    let finder = FINDER.get_or_init(|| memchr::memmem::Finder::new("\n\n"));
    let mut start = 0;
    let mut matches = finder.find_iter(text.as_bytes());
    std::iter::from_fn(move || {
        if start > text.len() {
            return None;
        }
        let end = matches.next().unwrap_or(text.len());
        let block = &text[start..end];
        start = end + 2;
        Some(block)
    })
}

/// Drops each line of [`REPEATED_BLOCK_CHARS`] or more that repeats an earlier line, as
/// [`drop_repeated_blocks`] does for blocks: paragraphs drawn as `div`s are separated by a
/// line break, not a blank line, and the same repeated paragraph must go whatever the
/// markup around it.
pub(super) fn drop_repeated_lines(text: String) -> String {
    let mut seen = TextSet::default();
    drop_lines(&text, |line, trimmed| {
        line.len() >= REPEATED_BLOCK_CHARS && !seen.insert(trimmed)
    })
    .unwrap_or(text)
}

/// Collapses runs of whitespace to one space and trims the ends.
pub fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_words(&mut out, 0, text);
    out
}

/// Appends the words of `text` to `out`, one space between words, and one before the first
/// when `out` has grown past `start`.
pub(super) fn push_words(out: &mut String, start: usize, text: &str) {
    for word in text.split_whitespace() {
        if out.len() > start {
            out.push(' ');
        }
        out.push_str(word);
    }
}

/// A `<title>` without the site name: the longest part when split on ` | `, ` - `, ` – `,
/// ` — ` or ` :: `.
pub(super) fn clean_title(title: &str) -> String {
    const SEPARATORS: &[&str] = &[" | ", " - ", " – ", " — ", " :: ", " · ", " • "];
    for separator in SEPARATORS {
        if title.contains(separator) {
            return title
                .split(separator)
                .max_by_key(|part| part.chars().count())
                .unwrap_or(title)
                .trim()
                .to_string();
        }
    }
    title.trim().to_string()
}
