//! The lines the renderer drops (see `lines.rs`): dates, filing lines, picture credits,
//! rights notices, calls to action, rows of controls and contact blocks.

use super::lines::*;

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
        assert!(is_credit_line(line, line_words(line)), "{line}");
    }
    for line in [
        "The photo: a harbour at dawn, taken by a reader, won the prize this year.",
        "Getty Images bought the archive in 2019 and opened it to researchers.",
        "The bakery reopened after the flood © and the queue went round the block on Monday. It was busy.",
    ] {
        assert!(!is_credit_line(line, line_words(line)), "{line}");
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
        "3:59 PM",
        "17:42 Uhr",
        "1:41",
        "Ten tekst przeczytasz w mniej niż minutę",
        "Aufrufe: 1120 | Hinzugefügt von: Ada",
        "Kommentare insgesamt: 0",
        "rating 4.5 / 5",
        "1–30 of 83 products",
        "Es werden die Fähren 1 bis 10 von insgesamt 19 angezeigt!",
    ] {
        assert!(is_metadata_line(line), "{line}");
    }
    for line in [
        "Am 3. März 2026 stimmte der Rat ab.",
        "03.03.2026: Ratssitzung",
        "Mai 2026 Programm",
        "17:42 Uhr: Die Fähre legt ab.",
        "Ten tekst opisuje port.",
        "Views differ: 3 of 5 readers liked the new ferry.",
    ] {
        assert!(!is_metadata_line(line), "{line}");
    }
}

#[test]
fn pleas_to_subscribe_sign_in_download_or_support_are_calls_to_action() {
    for line in [
        "Subscribe to Harbour Notes via RSS or Email",
        "Subscribe now to our print edition for the full story.",
        "To read the full story, please subscribe to the Harbour Gazette.",
        "Already a subscriber? Log in here.",
        "Get the latest news straight to your phone with the Harbour Gazette app.",
        "For breaking news download the Gazette apps for iOS and Android.",
        "Newsletter abonnieren",
        "Hafenblatt abonnieren",
        "Nichts Neues verpassen! Jetzt anmelden.",
        "Sie müssen sich einloggen, um einen Kommentar zu schreiben.",
        "Unterstütze Hafenblatt schon mit 3 Euro!",
        "Abonnez-vous à notre édition numérique",
        "Follow us on Mastodon for the latest updates.",
        "Want the harbour news every week? Sign up here",
        "Schauen Sie mal in unseren Hafennewsletter!",
        "Die neue Ausgabe jetzt am Kiosk, im Abo und als E-Paper.",
        "We want to hear what you think about this story. Write to the desk.",
        "Weitere Infos unter www.example.org.",
        "For more information, visit https://example.org",
    ] {
        assert!(is_call_to_action(line, line_words(line)), "{line}");
    }
    for line in [
        "The port authority asked ferry users to subscribe to its text alerts, and 4,000 did within a week.",
        "Wer die App herunterlädt, sieht die Abfahrten in Echtzeit.",
        "The ferry app crashed twice on Monday, the operator said.",
        "Unterstützt wird das Projekt von der Stadt.",
        // A line this long is a paragraph that says more than its plea.
        &format!(
            "{} Subscribe now.",
            "The harbour reopened after the storm. ".repeat(6)
        ),
    ] {
        assert!(!is_call_to_action(line, line_words(line)), "{line}");
    }
}

#[test]
fn rights_notices_are_credits() {
    for line in [
        "© 2021 Harbour Verlag AG. All Rights Reserved.",
        "(c) Harbour Press",
        "Copyright © 2023 Harbour Notes",
        "Copyright 2023, Harbour Notes",
        "Alle Rechte vorbehalten.",
        "© dpa-infocom",
    ] {
        assert!(
            is_rights_notice(line, line_words(line)) && is_credit_line(line, line_words(line)),
            "{line}"
        );
    }
    for line in ["aja/PAP", "erb/ots", "(SID)", "(dpa)", "DPA", "Reuters"] {
        assert!(
            is_agency_signoff(line) && is_credit_line(line, line_words(line)),
            "{line}"
        );
    }
    for line in ["AP", "Red", "dpa meldet Sturm", "and/or"] {
        assert!(!is_agency_signoff(line), "{line}");
    }
    for line in [
        "Copyright law lets a harbour map be copied for research.",
        "The archive holds the rights to all photographs of the harbour taken before 1950, the museum said.",
        &format!(
            "{} All rights reserved.",
            "The harbour reopened after the storm. ".repeat(6)
        ),
    ] {
        assert!(!is_rights_notice(line, line_words(line)), "{line}");
    }
}

#[test]
fn lines_of_only_button_labels_are_controls() {
    for line in [
        "Weiter »",
        "alle anzeigen",
        "zurück zur Übersicht",
        "Artikel drucken Auf Pinterest teilen",
        "Hinweise ausblenden",
        "Permalink https://example.org/p/3",
        "Read more",
        "- Print this page",
        "Show all",
        "Imprimer | Partager",
        "Dieses Protokoll als PDF herunterladen",
        "- Anzeige -",
        "[Advertisement]",
        "Ihr Warenkorb ist leer",
        "Cart (0)",
    ] {
        assert!(is_control_line(line, line_words(line)), "{line}");
    }
    for line in [
        "Weiter geht es am Montag mit der Fähre.",
        "Read more about the harbour in our archive of 1950.",
        "Print media lost readers in the harbour towns.",
        "Teilen ist das neue Haben, sagt die Genossenschaft.",
    ] {
        assert!(!is_control_line(line, line_words(line)), "{line}");
    }
}

#[test]
fn a_contact_block_goes_with_its_label_up_to_the_next_sentence() {
    let text = "The harbour reopens on Monday.\n\nKontakt:\n\nDr. Ada Example\nHafenamt Nord\nTelefon +49 40 123 45 67\nada@example.org\n\nThe ferries run every hour from then on.";
    assert_eq!(
        drop_metadata_lines(text.to_string()),
        "The harbour reopens on Monday.\n\nThe ferries run every hour from then on."
    );
    // A contact label at most eight lines long, then the text again.
    let long: String = (0..12).map(|i| format!("Desk {i}\n")).collect();
    let kept = drop_metadata_lines(format!("Media contact\n{long}"));
    assert!(kept.starts_with("Desk 8\n"), "{kept}");
    assert!(!is_contact_label(
        "Contact the harbour office for a permit",
        line_words("Contact the harbour office for a permit")
    ));
}

#[test]
fn the_notice_in_place_of_a_blocked_embed_is_dropped() {
    for line in [
        "Externer Inhalt",
        "Mastodon freischalten",
        "Wir stellen ohne dein Einverständnis keine Verbindung zu Mastodon her.",
        "Ich bin einverstanden, dass mir externe Inhalte angezeigt werden.",
        "Datenschutzeinstellungen verwalten",
    ] {
        assert!(is_embed_notice(line, line_words(line)), "{line}");
    }
    for line in [
        "Externe Gutachter prüften den Hafen im Mai.",
        "Die Stadt gab ihre Zustimmung zum neuen Anleger.",
    ] {
        assert!(!is_embed_notice(line, line_words(line)), "{line}");
    }
}
