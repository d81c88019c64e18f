//! The lines of a rendered text that are the page's, not the article's: dates and reading
//! times, filing lines, picture credits and rights notices, calls to action, rows of
//! controls, contact blocks. Each is settled by one search for the words its kind needs
//! ([`line_words`]) before its pattern runs.

use super::render::drop_lines;
use aho_corasick::AhoCorasick;
use regex::Regex;
use std::sync::LazyLock;

/// Lines this long or longer are never taken for article metadata.
pub(super) const METADATA_LINE_CHARS: usize = 60;

/// Whether a line is article metadata rather than content: only a date ("March 3, 2026",
/// "3 Mar 2026", "2026-03-03", "3. März 2026", "03.03.2026 | 14:32 Uhr", "3 de marzo de
/// 2026"), only a clock time or a video's length ("3:59 PM", "17:42 Uhr", "1:41"), a
/// reading time ("5 min read", "5 Minuten Lesezeit", "Ten tekst przeczytasz w mniej niż
/// minutę"), a publication stamp ("Updated on March 3, 2026", "Posted: 03/03/2026",
/// "Aktualisiert am 03.03.2026"), a counter ("Aufrufe: 1120 | ...", "Kommentare
/// insgesamt: 0", "rating 4.5 / 5"), or a listing's page status ("1–30 of 83 products",
/// "Es werden die Weine 1 bis 10 von insgesamt 19 angezeigt!"). A date inside a sentence, a table row or a list of events
/// with their titles is content and stays.
pub(super) fn is_metadata_line(trimmed: &str) -> bool {
    // One pattern of alternatives: one search per line, not one per kind.
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        // English month names and the German, French and Spanish ones that differ.
        const MONTH: &str = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|märz|mai|okt|dez|janv|févr|mars|avr|juil|août|déc|ene|abr|ago|dic)[a-zéû]*\.?";
        const TIME: &str = r"(,?\s*(\|\s*)?(um\s+)?\d{1,2}[:.]\d{2}(\s*(uhr|h|am|pm))?)?";
        let alternatives = [
            format!(
                r"(?i)^(-\s*)?(({MONTH}\s+\d{{1,2}},?\s+\d{{4}})|(\d{{1,2}}\.?\s+(de\s+)?{MONTH},?\s+(de\s+)?\d{{4}})|(\d{{4}}-\d{{2}}-\d{{2}})|(\d{{1,2}}\.\d{{1,2}}\.\d{{4}})){TIME}\.?$"
            ),
            r"(?i)^\d+\s*(min|minute|minuten)s?\.?\s*(read|lesezeit|de lecture)\.?$".to_string(),
            r"(?i)^(updated|published|posted|aktualisiert|veröffentlicht|erstellt|stand|publié|mis à jour|publicado|actualizado)( on| am| le| el)?:?\s+.{0,40}\d{4}.{0,12}$".to_string(),
            r"(?i)^\d{1,2}:\d{2}\s*(am|pm|a\.m\.|p\.m\.|uhr|h)?$".to_string(),
            r"(?i)^(aufrufe|views|hits|zugriffe|kommentare( insgesamt)?|comments|replies|antworten|likes|vues|visitas|rating|bewertungen)\s*:?\s*[\d.,]+(\s|\||$)".to_string(),
            r"(?i)^(es werden (die )?\S+ |showing |zeige |affichage de |mostrando |results? |ergebnisse? )?\d+\s*(bis|[-–]|to|à|a)\s*\d+\s*(von|of|sur|de)\s*(insgesamt )?\d+\b.{0,30}$".to_string(),
        ]
        .map(|p| format!("(?:{})", p.trim_start_matches("(?i)")))
        .join("|");
        Regex::new(&format!("(?i){alternatives}")).expect("the metadata pattern is valid")
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
        let first = trimmed.split(' ').next().unwrap_or("");
        return (first.eq_ignore_ascii_case("ten") || first.eq_ignore_ascii_case("czas"))
            && READING.is_match(trimmed);
    }
    PATTERN.is_match(trimmed)
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
pub(super) fn is_credit_line(trimmed: &str, words: u8) -> bool {
    if is_rights_notice(trimmed, words) || is_agency_signoff(trimmed) {
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
    // A label's colon, or an agency's name: other lines are settled without the pattern.
    (words & AGENCY != 0 || trimmed.contains(':')) && PATTERN.is_match(trimmed)
}

/// Lines this long (in characters) or longer end a contact block.
pub(super) const CONTACT_LINE_CHARS: usize = 80;
/// A contact block holds at most this many lines after its label.
pub(super) const CONTACT_LINES: usize = 8;

/// Whether a line labels the contact block under a press release or a story ("Kontakt:",
/// "Pressekontakt", "Media contact", "Ansprechpartnerin:"): the name, office, telephone and
/// e-mail after it are the same under every release an office sends, so they would make
/// two releases alike.
pub(super) fn is_contact_label(trimmed: &str, words: u8) -> bool {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?i)^(kontakt|pressekontakt|medienkontakt|ansprechpartner(in)?|ansprechpersonen",
            r"|(kontakt )?für rückfragen|rückfragen|contact|media contacts?|press contacts?",
            r"|contact presse|contacto)\s*:?$",
        ))
        .expect("the contact pattern is valid")
    });
    words & CONTACT != 0 && trimmed.len() < 40 && PATTERN.is_match(trimmed)
}

/// Whether a line can belong to a contact block: a short line that is not a sentence (a
/// name, an office, an address), or one that holds an e-mail or web address.
pub(super) fn is_contact_line(trimmed: &str) -> bool {
    shorter_than(trimmed, CONTACT_LINE_CHARS)
        && (!trimmed.ends_with(['.', '!', '?'])
            || trimmed.contains('@')
            || trimmed.contains("www.")
            || trimmed.contains("://"))
}

/// Whether a line is only a news agency's sign-off under a story: the writer's initials
/// and the agency ("aja/PAP", "erb/ots"), the agency in brackets ("(SID)", "(dpa)"), or its
/// name alone ("DPA", "Reuters"). A bare name of two letters ("AP") is left: it is as often
/// something else.
pub(super) fn is_agency_signoff(trimmed: &str) -> bool {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        const AGENCY: &str =
            "(pap|dpa|afp|reuters|ap|apa|kna|epd|sda|ddp|ots|ansa|efe|dts|sid|ktg)";
        const MORE: &str = r"(\s*/\s*\p{L}{2,5})*";
        Regex::new(&format!(
            r"(?i)^((\p{{L}}{{2,5}}\s*/\s*)+{AGENCY}{MORE}|[(\[]{AGENCY}{MORE}[)\]]|(?-i:DPA|AFP|SID|APA|KNA|EPD|SDA|DDP|PAP|ANSA|EFE|Reuters|REUTERS))\.?$"
        ))
        .expect("the sign-off pattern is valid")
    });
    // Initials and an agency, or one in brackets, or a name of three letters or more
    // alone: other lines are settled without the pattern.
    trimmed.len() < 40
        && (trimmed.contains(['/', '(', '[']) || !trimmed.contains(' '))
        && PATTERN.is_match(trimmed)
}

/// Kinds of line whose needed words [`line_words`] finds.
pub(super) const CALL_TO_ACTION: u8 = 1;
pub(super) const RIGHTS: u8 = 2;
pub(super) const CONTROL: u8 = 4;
pub(super) const CONTACT: u8 = 8;
/// A picture agency's name (see [`is_credit_line`]).
pub(super) const AGENCY: u8 = 16;
pub(super) const EMBED: u8 = 32;

/// Lines this long (in characters) or longer are of none of those kinds: each kind's
/// limit is at most this. Most of a text's bytes are in such lines.
const WORDS_LINE_CHARS: usize = 200;

/// The words each kind of line needs: a line holds one of its kind's words, ASCII letters
/// compared without case, or its pattern cannot match.
const LINE_WORDS: [(u8, &[&str]); 6] = [
    (
        CALL_TO_ACTION,
        &[
            "subscri",
            "abonn",
            "suscr",
            "newsletter",
            "the full",
            "the whole",
            "rest of the",
            "verpassen",
            "versäum",
            "date on our",
            "sign up",
            "im abo",
            "e-paper",
            "am kiosk",
            "want to hear",
            "to the editor",
            "let us know",
            "meinung z",
            "einloggen",
            "anmelden",
            "download",
            " app",
            "google play",
            "android",
            "téléchargez",
            "descarga",
            "follow us",
            "support ",
            "unterstütze",
            "wesprzyj",
            "info",
        ],
    ),
    (
        RIGHTS,
        &["©", "(c)", "copyright", "reserv", "réserv", "vorbehalten"],
    ),
    (
        CONTROL,
        &[
            "weiter",
            "zurück",
            "back to",
            "anzeige",
            "show ",
            "more",
            "blenden",
            "lesen",
            "la suite",
            "leer m",
            "drucken",
            "print",
            "imprim",
            "teilen",
            "share",
            "partager",
            "compartir",
            "kommentieren",
            "speichern",
            "perma",
            "pdf",
            "download",
            "advert",
            "werbung",
            "sponsored",
            "publici",
            "reklama",
            "warenkorb",
            "einkaufswagen",
            "cart",
            "basket",
            "shopping bag",
            "panier",
            "carrito",
            "cesta",
        ],
    ),
    (CONTACT, &["kontakt", "ansprech", "rückfragen", "contact"]),
    (AGENCY, &["images", "stock", "alliance", "photo"]),
    (
        EMBED,
        &[
            "einverständnis",
            "zustimmung",
            "externe",
            "drittanbieter",
            "third-party content",
            "third party content",
            "datenschutzeinstellungen",
            "freischalten",
            "einverstanden",
            "cookie-einstellungen",
            "cookie settings",
        ],
    ),
];

/// The kinds of line ([`CALL_TO_ACTION`], [`RIGHTS`], [`CONTROL`], [`CONTACT`], [`AGENCY`],
/// [`EMBED`], as a set)
/// whose needed words `line` holds, ASCII letters compared without case. One search for
/// the words of every kind settles most lines before any pattern runs: a pattern per kind
/// costs a call and a pass of its own on every line, and a text has about a hundred lines.
pub(super) fn line_words(line: &str) -> u8 {
    static WORDS: LazyLock<(AhoCorasick, Vec<u8>)> = LazyLock::new(|| {
        // Each word once, with every kind that needs it.
        let mut words: Vec<&str> = Vec::new();
        let mut kind_of: Vec<u8> = Vec::new();
        for (kind, list) in LINE_WORDS {
            for word in list {
                match words.iter().position(|w| w == word) {
                    Some(at) => kind_of[at] |= kind,
                    None => {
                        words.push(word);
                        kind_of.push(kind);
                    }
                }
            }
        }
        // A DFA folds case as it walks, with no copy of the line; on lines this short a
        // prefilter (a SIMD search for the words' first bytes) finds a candidate nearly
        // everywhere and costs more than it saves.
        let automaton = AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostFirst)
            .ascii_case_insensitive(true)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .prefilter(false)
            .build(&words)
            .expect("the line words are valid");
        (automaton, kind_of)
    });
    if !shorter_than(line, WORDS_LINE_CHARS) {
        return 0;
    }
    let (automaton, kind_of) = &*WORDS;
    automaton.find_iter(line).fold(0, |kinds, found| {
        kinds | kind_of[found.pattern().as_usize()]
    })
}

/// Whether `text` has fewer than `chars` characters; its length in bytes settles a long
/// line without counting them.
fn shorter_than(text: &str, chars: usize) -> bool {
    text.len() < 4 * chars && text.chars().count() < chars
}

/// The shape of most line checks: the words the kind needs are there (`has_words`, from
/// [`line_words`]), the line is shorter than `chars` characters, and `pattern` matches it.
fn is_short_match(trimmed: &str, has_words: bool, chars: usize, pattern: &Regex) -> bool {
    has_words && shorter_than(trimmed, chars) && pattern.is_match(trimmed)
}

/// Lines this long (in characters) or longer are never taken for a rights notice.
pub(super) const RIGHTS_LINE_CHARS: usize = 200;

/// Whether a line states who owns the page ("© 2021 Harbour Verlag AG. All Rights
/// Reserved.", "Copyright 2023, Harbour Notes", "Alle Rechte vorbehalten"): a site's
/// footer, or the notice an agency puts under every story it sells. On the boilerplate
/// development set 19 lines under 200 characters are such notices, none of them main text.
pub(super) fn is_rights_notice(trimmed: &str, words: u8) -> bool {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?i)^(©|\(c\)(?-u:\s)|copyright(?-u:\s)*(©|\d{4}))",
            r"|all rights reserved|alle rechte vorbehalten|tous droits réservés",
            r"|todos los derechos reservados",
        ))
        .expect("the rights pattern is valid")
    });
    is_short_match(trimmed, words & RIGHTS != 0, RIGHTS_LINE_CHARS, &PATTERN)
}

/// Lines this long (in characters) or longer are never taken for a row of controls.
pub(super) const CONTROL_LINE_CHARS: usize = 80;

/// Whether a line is only the labels of a page's controls, one to three of them ("Weiter
/// »", "alle anzeigen", "zurück zur Listenansicht", "Rezept drucken Bei Pinterest
/// speichern", "Quellen ausblenden", "Permalink https://...", "Read more", "Print", "Show
/// all", "Imprimer", "Leer más"), the shop's cart ("Ihr Warenkorb ist leer", "Cart (0)"),
/// or an advert's label ("- Anzeige -", "Advertisement"). A
/// button, a toggle or the label over an advert drawn as text says nothing of the article.
/// On the boilerplate development set 58 lines are such labels: 12 annotated boilerplate,
/// none main text; on WCXB dev 118 of 119 are outside the reference text.
pub(super) fn is_control_line(trimmed: &str, words: u8) -> bool {
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
            // The shop's cart.
            r"|((ihr|your|mein|my|votre|tu) )?(warenkorb|einkaufswagen|shopping cart|cart",
            r"|shopping bag|basket|panier|carrito|cesta)( ist leer| is empty| est vide",
            r"| está vacío)?( \(?\d+\)?)?",
            // An advert's label.
            r"|anzeige|advertisement|werbung|sponsored|publicidad|publicité|reklama",
        );
        Regex::new(&format!(
            r"(?i)^[-–—*\[ ]*(({control})[-–—.!»›>:|/·\] ]*){{1,3}}$"
        ))
        .expect("the control pattern is valid")
    });
    is_short_match(trimmed, words & CONTROL != 0, CONTROL_LINE_CHARS, &PATTERN)
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
/// ("... im Abo, als e-Paper ..."), or a pointer to another site for the rest ("Weitere
/// Infos unter www.example.org."). Sites put these under every article, so two articles
/// of one site share them. On the boilerplate development set the pattern finds 39 lines
/// under 200 characters: 19 are annotated boilerplate, 20 are not annotated and are calls
/// to action, none is main text; on WCXB dev 39 of its 49 lines are outside the reference
/// text.
pub(super) fn is_call_to_action(trimmed: &str, words: u8) -> bool {
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
            // A pointer to another site for the rest.
            r"|^(weitere |mehr )?(infos?|informationen) (unter|auf|bei|gibt es unter|finden sie unter):? (www\.|https?://)\S+\.?$",
            r"|^(more info(rmation)?|for more information),? (at|visit|see|on):? (www\.|https?://)\S+\.?$",
        )
        // ASCII word boundaries (every boundary above is beside an ASCII letter) keep the
        // search in the lazy DFA: a Unicode one sends it to the slower engines on any line
        // that is not all ASCII.
        .replace(r"\b", r"(?-u:\b)");
        Regex::new(&pattern).expect("the call-to-action pattern is valid")
    });
    is_short_match(
        trimmed,
        words & CALL_TO_ACTION != 0,
        CALL_TO_ACTION_CHARS,
        &PATTERN,
    )
}

/// Lines this long (in characters) or longer are never taken for an embed's notice.
pub(super) const EMBED_LINE_CHARS: usize = 200;

/// Whether a line is the notice a site shows in place of a blocked embed (a post, a video)
/// until the reader consents: "Externer Inhalt", "Twitter freischalten", "Wir respektieren
/// deine Privatsphäre und stellen deshalb ohne dein Einverständnis keine Verbindung zu
/// Twitter her.", "Ich bin einverstanden, dass ...", "Datenschutzeinstellungen verwalten".
/// On the boilerplate development set 5 lines are such notices, 2 annotated boilerplate,
/// none main text.
pub(super) fn is_embed_notice(trimmed: &str, words: u8) -> bool {
    static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"(?i)ohne (dein|ihr|deine|ihre) (einverständnis|zustimmung)",
            r"|^(externe[rn]? inhalte?|inhalte? von drittanbietern|third[- ]party content)$",
            r"|^datenschutzeinstellungen( verwalten| anpassen)?$|^\S+ freischalten$",
            r"|^ich bin (damit )?einverstanden, dass|cookie-einstellungen|cookie settings",
        ))
        .expect("the embed pattern is valid")
    });
    is_short_match(trimmed, words & EMBED != 0, EMBED_LINE_CHARS, &PATTERN)
}

/// Drops the lines that are only article metadata ([`is_metadata_line`],
/// [`is_filing_line`], [`is_credit_line`]), a call to action ([`is_call_to_action`]), a row
/// of controls ([`is_control_line`]) or a blocked embed's notice ([`is_embed_notice`]), and
/// the contact block under a press release ([`is_contact_label`] and up to
/// [`CONTACT_LINES`] lines after it): the date and reading
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
        let words = line_words(trimmed);
        if is_contact_label(trimmed, words) {
            contact = CONTACT_LINES;
            return true;
        }
        is_metadata_line(trimmed)
            || super::unspaced_lines::is_page_line(trimmed)
            || is_filing_line(trimmed)
            || is_credit_line(trimmed, words)
            || is_call_to_action(trimmed, words)
            || is_control_line(trimmed, words)
            || is_embed_notice(trimmed, words)
    })
    .unwrap_or(text)
}
