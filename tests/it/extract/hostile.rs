//! Hostile input: empty and binary bodies, a 50 MB line, deep nesting, unclosed raw text.

use super::*;

#[test]
fn empty_and_binary_input_give_empty_text() {
    assert_eq!(extract("", None).text, "");
    let binary: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let out = extract_bytes(&binary, Some("application/octet-stream"), None);
    assert!(out.links.is_empty());
}

#[test]
fn a_50_mb_page_on_one_line_is_extracted() {
    let mut html = String::with_capacity(50 * 1024 * 1024 + 64);
    html.push_str("<html><body><p>");
    while html.len() < 50 * 1024 * 1024 {
        html.push_str("lorem ipsum dolor sit amet ");
    }
    html.push_str("</p></body></html>");
    let out = extract(&html, None);
    assert!(out.text.len() > 49 * 1024 * 1024);
    assert!(!out.text.contains('\n'));
}

#[test]
fn deep_nesting_neither_overflows_nor_loses_text() {
    for tag in ["div", "span", "section", "blockquote", "ul"] {
        let html = format!(
            "<body>{}deep text{}",
            format!("<{tag}>").repeat(100_000),
            format!("</{tag}>").repeat(100_000)
        );
        let out = extract(&html, None);
        assert!(out.text.contains("deep text"), "{tag}");
    }
    let unclosed = "<div><p>open paragraph <b>bold <i>italic <table><tr><td>cell".repeat(20_000);
    let out = extract(&unclosed, None);
    assert!(out.text.contains("open paragraph bold italic"));
}

#[test]
fn unclosed_raw_text_elements_swallow_only_themselves() {
    let out = extract("<p>kept text here</p><script>never closed <p>hidden", None);
    assert_eq!(out.text, "kept text here");
    let out = extract("<p>kept</p><!-- never closed <p>hidden", None);
    assert_eq!(out.text, "kept");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Text inside script, style and template never reaches the output, however the
    /// surrounding markup is built.
    #[test]
    fn raw_text_never_leaks(
        parts in prop::collection::vec(
            prop_oneof![
                "[a-z ]{0,20}".prop_map(|t| format!("<p>{t}</p>")),
                "[a-z ]{0,20}".prop_map(|t| format!("<div class=\"content\">{t}")),
                Just("</div>".to_string()),
                Just("<ul><li>".to_string()),
                "[a-z<>/ ]{0,12}".prop_map(|t| format!("<script>var s='{t} SECRET';</script>")),
                "[a-z ]{0,12}".prop_map(|t| format!("<style>p::after{{content:'{t} SECRET'}}</style>")),
                "[a-z ]{0,12}".prop_map(|t| format!("<template><p>{t} SECRET</p></template>")),
                Just("<SCRIPT type=module>SECRET</SCRIPT >".to_string()),
                Just("<noscript><p>shown without script</p></noscript>".to_string()),
            ],
            0..30,
        )
    ) {
        let html = format!("<html><body>{}</body></html>", parts.concat());
        let out = extract(&html, None);
        prop_assert!(!out.text.contains("SECRET"), "{}", out.text);
    }
}
