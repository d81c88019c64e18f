//! The metadata lines the renderer drops: dates, filing lines and picture credits.

use super::render::*;

#[test]
fn picture_credits_and_captions_that_end_in_one_are_metadata() {
    for line in [
        "Foto: Ingo Pertramer",
        "Bild: Werk/CHRISTIAN HOUDEK",
        "Titelbild:",
        "Photo credit: Harbour Office",
        "Quelle: Deutscher Jagdverband (DJV)",
        "Augusta National/Getty Images",
        "ShutterStock",
        "Lee Elder war beim Masters 1975 der Zuschauermagnet. | © Augusta National/Getty Images",
    ] {
        assert!(is_credit_line(line), "{line}");
    }
    for line in [
        "The photo: a harbour at dawn, taken by a reader, won the prize this year.",
        "Getty Images bought the archive in 2019 and opened it to researchers.",
        "The bakery reopened after the flood © and the queue went round the block on Monday. It was busy.",
    ] {
        assert!(!is_credit_line(line), "{line}");
    }
}

#[test]
fn tag_lines_filing_sentences_and_pingbacks_are_metadata() {
    for line in [
        "Tags: harbour, ferries, winter",
        "Themen: Ehrenamt Jugendverbände",
        "Schlagwörter : Hafen, Fähre",
        "This entry was posted in News. Bookmark the permalink.",
        "Dieser Eintrag wurde veröffentlicht in Podcast und verschlagwortet mit berlin.",
        "1. Pingback von Papierkorb - Lesezeichen | 11.09.2011 23:31",
        "Trackback: Notes from the harbour",
    ] {
        assert!(is_filing_line(line), "{line}");
    }
    for line in [
        "The tags: on each crate were checked at the quay.",
        "Wir haben die Themen des Abends besprochen: Hafen und Fähre.",
        "A pingback is sent when another blog links to a post.",
    ] {
        assert!(!is_filing_line(line), "{line}");
    }
    let text = "The harbour reopened.\n\nTags: harbour, ferries\n\nThe end.".to_string();
    assert_eq!(
        drop_metadata_lines(text),
        "The harbour reopened.\n\nThe end."
    );
}

#[test]
fn dates_stamps_and_reading_times_in_german_french_and_spanish_are_metadata() {
    for line in [
        "March 3, 2026",
        "3. März 2026",
        "03.03.2026 | 14:32 Uhr",
        "3 de marzo de 2026",
        "3 mars 2026",
        "Aktualisiert am 03.03.2026, 14:32",
        "Veröffentlicht am 3. März 2026",
        "Publié le 3 mars 2026",
        "5 Minuten Lesezeit",
    ] {
        assert!(is_metadata_line(line), "{line}");
    }
    for line in [
        "Am 3. März 2026 stimmte der Rat ab.",
        "03.03.2026: Ratssitzung",
        "Mai 2026 Programm",
    ] {
        assert!(!is_metadata_line(line), "{line}");
    }
}
