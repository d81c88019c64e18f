//! The canonicalization rules, one hand-written case per rule and per tricky corner, and
//! property tests for idempotence and round-tripping.

use crawldedup::urls::canonical::{CanonicalError, CanonicalOptions, Canonicalizer};
use proptest::prelude::*;
use url::Url;

fn canon(input: &str) -> String {
    match Canonicalizer::default().canonicalize(input) {
        Ok(url) => url.into(),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn every_rule_has_a_case() {
    let cases: &[(&str, &str)] = &[
        // scheme and host case
        ("HTTP://Example.COM/", "http://example.com/"),
        // IDN to punycode
        ("http://bücher.de/", "http://xn--bcher-kva.de/"),
        ("http://BÜCHER.de/", "http://xn--bcher-kva.de/"),
        // IPv4 in odd notations
        ("http://0x7f.1/", "http://127.0.0.1/"),
        ("http://2130706433/", "http://127.0.0.1/"),
        ("http://0177.0.0.01/", "http://127.0.0.1/"),
        // IPv6
        ("http://[0:0:0:0:0:0:0:1]/", "http://[::1]/"),
        ("http://[2001:DB8::1]:8080/a", "http://[2001:db8::1]:8080/a"),
        ("http://[::ffff:192.168.0.1]/", "http://[::ffff:c0a8:1]/"),
        // trailing dot on the host
        ("http://example.com./a", "http://example.com/a"),
        // default port
        ("https://h.com:443/", "https://h.com/"),
        ("http://h.com:80/", "http://h.com/"),
        ("http://h.com:8080/", "http://h.com:8080/"),
        ("https://h.com:80/", "https://h.com:80/"),
        // empty path
        ("http://h.com", "http://h.com/"),
        // dot segments, plain and encoded
        ("http://h.com/a/./b/../c", "http://h.com/a/c"),
        ("http://h.com/a/%2e%2E/c", "http://h.com/c"),
        ("http://h.com/../../a", "http://h.com/a"),
        // fragment
        ("http://h.com/a#top", "http://h.com/a"),
        ("http://h.com/a?x=1#top", "http://h.com/a?x=1"),
        // unreserved characters decoded
        (
            "http://h.com/%7Euser/%41%62%2D%5F%2E",
            "http://h.com/~user/Ab-_.",
        ),
        // remaining escapes upper-cased; encoded slash kept
        ("http://h.com/a%2fb", "http://h.com/a%2Fb"),
        ("http://h.com/a%e2%82%ac", "http://h.com/a%E2%82%AC"),
        // lone percent escaped
        ("http://h.com/100%", "http://h.com/100%25"),
        ("http://h.com/a%zz", "http://h.com/a%25zz"),
        // non-ASCII paths as UTF-8 escapes, however they arrive
        ("http://h.com/é", "http://h.com/%C3%A9"),
        ("http://h.com/%c3%a9", "http://h.com/%C3%A9"),
        ("http://h.com/a b", "http://h.com/a%20b"),
        // plus in a path is a literal plus
        ("http://h.com/a+b", "http://h.com/a+b"),
        // session path parameters
        ("http://h.com/a;jsessionid=F00", "http://h.com/a"),
        ("http://h.com/a;JSESSIONID=F00?x=1", "http://h.com/a?x=1"),
        ("http://h.com/a;v=1", "http://h.com/a;v=1"),
        // space in a query: + and %20 are one resource, literal plus stays %2B
        ("http://h.com/?q=a%20b", "http://h.com/?q=a+b"),
        ("http://h.com/?q=a+b", "http://h.com/?q=a+b"),
        ("http://h.com/?q=a b", "http://h.com/?q=a+b"),
        ("http://h.com/?q=a%2bb", "http://h.com/?q=a%2Bb"),
        // tracking and session parameters
        ("http://h.com/?utm_source=x&id=1", "http://h.com/?id=1"),
        ("http://h.com/?UTM_Campaign=x&id=1", "http://h.com/?id=1"),
        (
            "http://h.com/?id=1&fbclid=a&gclid=b&msclkid=c",
            "http://h.com/?id=1",
        ),
        ("http://h.com/?mc_cid=1&mc_eid=2&x=3", "http://h.com/?x=3"),
        ("http://h.com/?PHPSESSID=1&sid=2&x=3", "http://h.com/?x=3"),
        ("http://h.com/?side=1", "http://h.com/?side=1"),
        ("http://h.com/?utm%5Fsource=x&id=1", "http://h.com/?id=1"),
        // sorting, stable for repeated names
        ("http://h.com/?b=2&a=2&a=1", "http://h.com/?a=2&a=1&b=2"),
        ("http://h.com/?b&a=", "http://h.com/?a=&b"),
        // empty parameters and empty query
        ("http://h.com/?", "http://h.com/"),
        ("http://h.com/?&", "http://h.com/"),
        ("http://h.com/?a=1&&b=2&", "http://h.com/?a=1&b=2"),
        ("http://h.com/?utm_source=x", "http://h.com/"),
        // userinfo and whitespace around the input
        ("  http://h.com/a\n", "http://h.com/a"),
        ("http://user:pw@h.com/", "http://user:pw@h.com/"),
    ];
    let mut failures = Vec::new();
    for (input, expected) in cases {
        let got = canon(input);
        if got != *expected {
            failures.push(format!("{input:?}: got {got:?}, want {expected:?}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn non_http_schemes_and_garbage_are_typed_errors() {
    let c = Canonicalizer::default();
    for (input, scheme) in [
        ("mailto:a@b.com", "mailto"),
        ("javascript:void(0)", "javascript"),
        ("data:text/html,hi", "data"),
        ("tel:+15551234", "tel"),
        ("ftp://h.com/file", "ftp"),
        ("file:///etc/passwd", "file"),
    ] {
        assert_eq!(
            c.canonicalize(input),
            Err(CanonicalError::UnsupportedScheme(scheme.to_string())),
            "{input}"
        );
    }
    for input in [
        "",
        "not a url",
        "/relative/path",
        "http://",
        "http://exa mple.com/",
        "http://[::1/",
    ] {
        assert!(
            matches!(c.canonicalize(input), Err(CanonicalError::Parse(_))),
            "{input}"
        );
    }
    let long = format!("http://h.com/{}", "a".repeat(9000));
    assert!(matches!(
        c.canonicalize(&long),
        Err(CanonicalError::TooLong(_))
    ));
}

#[test]
fn relative_links_resolve_against_the_base() {
    let c = Canonicalizer::default();
    let base = Url::parse("http://h.com/a/b/page.html?x=1").unwrap();
    let cases = [
        ("other.html", "http://h.com/a/b/other.html"),
        ("../up?utm_source=x#f", "http://h.com/a/up"),
        ("/root", "http://h.com/root"),
        ("?y=2", "http://h.com/a/b/page.html?y=2"),
        ("//Other.com/x", "http://other.com/x"),
        ("#frag", "http://h.com/a/b/page.html?x=1"),
        ("https://h.com:443/s", "https://h.com/s"),
    ];
    for (href, expected) in cases {
        assert_eq!(
            c.canonicalize_link(&base, href).unwrap().as_str(),
            expected,
            "{href}"
        );
    }
    assert!(matches!(
        c.canonicalize_link(&base, "mailto:x@h.com"),
        Err(CanonicalError::UnsupportedScheme(_))
    ));
}

#[test]
fn optional_folds_are_off_by_default_and_work_when_on() {
    assert_eq!(
        canon("http://www.h.com/a/index.html"),
        "http://www.h.com/a/index.html"
    );
    let c = Canonicalizer::new(CanonicalOptions {
        fold_www: true,
        fold_index: true,
        ..CanonicalOptions::default()
    });
    let cases = [
        ("http://www.h.com/a/index.html", "http://h.com/a/"),
        ("http://WWW.h.com/INDEX.HTM", "http://h.com/"),
        ("http://www.com/", "http://www.com/"),
        ("http://h.com/index.html/x", "http://h.com/index.html/x"),
        ("http://h.com/myindex.html", "http://h.com/myindex.html"),
    ];
    for (input, expected) in cases {
        assert_eq!(c.canonicalize(input).unwrap().as_str(), expected, "{input}");
    }
}

#[test]
fn configured_parameters_replace_the_defaults() {
    let c = Canonicalizer::new(CanonicalOptions {
        strip_params: vec![
            crawldedup::urls::ParamPattern::parse("ref"),
            crawldedup::urls::ParamPattern::parse("trk_*"),
        ],
        ..CanonicalOptions::default()
    });
    assert_eq!(
        c.canonicalize("http://h.com/?ref=a&trk_x=1&utm_source=y&id=2")
            .unwrap()
            .as_str(),
        "http://h.com/?id=2&utm_source=y"
    );
}

fn url_strategy() -> impl Strategy<Value = String> {
    let scheme = prop_oneof![Just("http"), Just("https"), Just("HTTP"), Just("hTTps")];
    let host = prop_oneof![
        Just("example.com".to_string()),
        Just("WWW.Example.COM.".to_string()),
        Just("bücher.de".to_string()),
        Just("127.0.0.1".to_string()),
        Just("0x7f.1".to_string()),
        Just("[::1]".to_string()),
        Just("[2001:DB8:0:0::1]".to_string()),
        "[a-z]{1,8}\\.[a-z]{2,3}",
    ];
    let port = prop_oneof![Just(""), Just(":80"), Just(":443"), Just(":8080")];
    let segment = prop_oneof![
        "[a-zA-Z0-9._~-]{0,6}",
        Just("..".to_string()),
        Just(".".to_string()),
        Just("%2e%2E".to_string()),
        Just("%7e%41".to_string()),
        Just("a%2fb".to_string()),
        Just("é ü".to_string()),
        Just("100%".to_string()),
        Just("a;jsessionid=1".to_string()),
        Just("a;v=2".to_string()),
        Just("a+b".to_string()),
        "[ -~]{0,5}",
    ];
    let path = prop::collection::vec(segment, 0..5).prop_map(|s| s.join("/"));
    let param = prop_oneof![
        "[a-z]{1,4}=[a-z0-9]{0,4}",
        Just("utm_source=x".to_string()),
        Just("q=a%20b".to_string()),
        Just("q=a+b".to_string()),
        Just("q=a%2Bb".to_string()),
        Just("x".to_string()),
        Just("".to_string()),
        Just("%7E=%7e".to_string()),
        Just("sid=9".to_string()),
        "[ -~]{0,6}",
    ];
    let query = prop_oneof![
        Just(String::new()),
        Just("?".to_string()),
        prop::collection::vec(param, 0..5).prop_map(|p| format!("?{}", p.join("&"))),
    ];
    let fragment = prop_oneof![Just(""), Just("#top"), Just("#a%20b")];
    (scheme, host, port, path, query, fragment)
        .prop_map(|(s, h, p, path, q, f)| format!("{s}://{h}{p}/{path}{q}{f}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn canonicalization_is_idempotent(input in url_strategy(), www in any::<bool>(), index in any::<bool>()) {
        let c = Canonicalizer::new(CanonicalOptions { fold_www: www, fold_index: index, ..CanonicalOptions::default() });
        if let Ok(once) = c.canonicalize(&input) {
            let twice = c.canonicalize(once.as_str()).expect("a canonical URL canonicalizes");
            prop_assert_eq!(once.as_str(), twice.as_str());
        }
    }

    #[test]
    fn canonical_url_parses_back_to_itself(input in url_strategy()) {
        if let Ok(canonical) = Canonicalizer::default().canonicalize(&input) {
            let reparsed = Url::parse(canonical.as_str()).expect("a canonical URL parses");
            prop_assert_eq!(reparsed.as_str(), canonical.as_str());
        }
    }

    #[test]
    fn arbitrary_input_never_panics(input in "\\PC{0,64}") {
        let _ = Canonicalizer::default().canonicalize(&input);
    }
}
