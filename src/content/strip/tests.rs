//! The scan without its attribute rules (`strip_elements`) and the whole of `strip` on
//! chosen pages.

use super::*;

#[test]
fn drops_bodies_and_keeps_json_ld() {
    let page = "<p>a</p><script>if (a<b) x('</p>')</script><p>b</p>\
        <STYLE type=x>p{}</style><!-- c --><script type=\"application/ld+json\">{\"a\":1}</script>\
        <svg><path d=1/></svg><svg/><p>c";
    let out = strip(page);
    assert_eq!(out.html, "<p>a</p><p>b</p><p>c");
    assert_eq!(out.json_ld, vec!["{\"a\":1}".to_string()]);
}

#[test]
fn noscript_notices_go_and_noscript_content_stays() {
    let notice =
        "<p>a</p><noscript>You need to enable JavaScript to run this app.</noscript><p>b</p>";
    assert_eq!(strip(notice).html, "<p>a</p><p>b</p>");
    let post = format!(
        "<noscript><div class=post>{}</div></noscript>",
        "words ".repeat(100)
    );
    assert_eq!(
        strip(&post).html,
        format!("<div class=post>{}</div>", "words ".repeat(100))
    );
    // Unclosed: a short rest of the page goes, a long one is parsed.
    assert_eq!(strip("<p>a</p><noscript>enable it").html, "<p>a</p>");
    let long = format!("<noscript><p>{}", "text ".repeat(200));
    assert_eq!(strip(&long).html, format!("<p>{}", "text ".repeat(200)));
    // Many unclosed tags: each looks only a short way ahead.
    let many = "<noscript>".repeat(100_000) + &"x".repeat(1000);
    assert!(strip(&many).html.ends_with('x'));
}

#[test]
fn comments_end_where_the_tokenizer_ends_them() {
    for (page, want) in [
        ("<p>a</p><!--><p>b</p>", "<p>a</p><p>b</p>"),
        ("<p>a</p><!---><p>b</p>", "<p>a</p><p>b</p>"),
        ("<p>a</p><!-- x --!><p>b</p>", "<p>a</p><p>b</p>"),
        ("<p>a</p><!-- x -- y --><p>b</p>", "<p>a</p><p>b</p>"),
        ("<p>a</p><!-- <!-- x --><p>b</p>", "<p>a</p><p>b</p>"),
    ] {
        assert_eq!(strip_elements(page).html, want, "{page}");
        assert_eq!(crate::content::extract(page, None).text, "a\n\nb", "{page}");
    }
}

#[test]
fn a_script_ends_where_the_tokenizer_ends_it() {
    // An old page's `document.write` inside `<!-- ... //-->`: the first `</script>`
    // ends only the inner part.
    let page = "<p>a</p><script><!--\ndocument.write(\"<script src=x></script>\");\n//--></script><p>b</p>";
    assert_eq!(strip_elements(page).html, "<p>a</p><p>b</p>");
    // `<!-->` escapes nothing; an unclosed inner part runs to the end, as the parser reads it.
    assert_eq!(strip_elements("<script><!--></script>b").html, "b");
    assert_eq!(strip_elements("<script><!--<script></script>b").html, "");
    // An end tag is read by the tag states too: a `>` in a quoted value is the value's.
    assert_eq!(strip_elements("<script>a</script x=\">\">b").html, "b");
    assert_eq!(strip_elements("<style>a</style x='>'>b").html, "b");
    assert_eq!(strip_elements("<svg>a</svg x=\">\">b").html, "b");
}

#[test]
fn a_text_lt_before_a_removal_stays_text() {
    assert_eq!(strip_elements("x <<!-- c -->a b").html, "x &lt;a b");
    assert_eq!(
        crate::content::extract("<p>x <<!-- c -->a b</p>", None).text,
        "x <a b"
    );
}

#[test]
fn nothing_is_dropped_inside_a_bogus_comment() {
    // `<!x ...>` is a comment up to the first `>`: the script tag inside it is text of
    // the comment, so the text after the script's end tag stays text.
    for page in [
        "<!x <script>s</script>Important text<p>more</p>",
        "<? <style>s</style>Important text<p>more</p>",
        "</ <iframe>s</iframe>Important text<p>more</p>",
    ] {
        assert_eq!(strip_elements(page).html, page);
        let text = crate::content::extract(page, None).text;
        assert!(text.contains("Important text"), "{page}: {text:?}");
    }
}

#[test]
fn nothing_is_dropped_inside_a_text_body() {
    // The tokenizer reads a title's, a textarea's or an `xmp`'s body as text up to its end
    // tag, and everything after `plaintext`: a comment or a script tag there is text.
    for (page, want) in [
        (
            "<title>a <!-- b --> <script>c</script></title><p data-x=1>d<!-- e -->",
            "<title>a <!-- b --> <script>c</script></title><p>d",
        ),
        (
            "<textarea><!-- a --></textarea><p>b<!-- c -->d",
            "<textarea><!-- a --></textarea><p>bd",
        ),
        (
            "<xmp><style>a</style></xmp>b<style>c</style>",
            "<xmp><style>a</style></xmp>b",
        ),
        (
            "<plaintext><script>a</script><!-- b --><p data-x=1>",
            "<plaintext><script>a</script><!-- b --><p data-x=1>",
        ),
        // The name is the tokenizer's, up to a space, `/` or `>`, in any case.
        (
            "<TITLE/><!-- a --></title>b<!-- c -->",
            "<TITLE/><!-- a --></title>b",
        ),
        (
            "<title-x><!-- a --><p data-x=1>b</title-x>",
            "<title-x><p>b</title-x>",
        ),
        ("<title:x><!-- a -->b</title:x>", "<title:x>b</title:x>"),
        ("<plaintext:y><!-- a -->b", "<plaintext:y>b"),
    ] {
        assert_eq!(strip(page).html, want, "{page}");
    }
}

#[test]
fn unclosed_elements_run_to_the_end() {
    assert_eq!(strip("<p>a<script>never closed").html, "<p>a");
    assert_eq!(strip("<p>a<!-- never closed").html, "<p>a");
    assert_eq!(strip("<p>a<script").html, "<p>a");
}

#[test]
fn unclosed_svg_and_math_end_where_html_resumes() {
    // An icon without `</svg>` inside a link: the link's end tag ends it.
    assert_eq!(
        strip("<a href=/><svg class=i></a><ul><li>menu</ul><p>text</p>").html,
        "<a href=/></a><ul><li>menu</ul><p>text</p>"
    );
    // An HTML start tag ends it too.
    assert_eq!(
        strip("<svg><path d=1><div>text</div>").html,
        "<div>text</div>"
    );
    assert_eq!(strip("<math><mi>x</mi><p>text").html, "<p>text");
    // SVG's own `a`, and HTML inside `foreignObject`, stay inside.
    assert_eq!(
        strip("<svg><a href=x><text>t</text></a><foreignObject><div>d</div></foreignObject></svg><p>after").html,
        "<p>after"
    );
    // With nothing to end it, it runs to the end as before.
    assert_eq!(strip("<p>a<svg><path d=1>").html, "<p>a");
}

#[test]
fn nesting_beyond_the_cap_is_flattened() {
    let deep = "<div>".repeat(MAX_DEPTH + 100) + "text" + &"</div>".repeat(MAX_DEPTH + 100);
    let out = strip(&deep).html;
    assert_eq!(out.matches("<div>").count(), MAX_DEPTH);
    assert_eq!(out.matches("</div>").count(), MAX_DEPTH);
    assert!(out.contains("text"));
    // Self-closing and auto-closed tags do not count.
    let flat = "<p>a<br/><span/>".repeat(2 * MAX_DEPTH);
    assert_eq!(strip(&flat).html, flat);
}

#[test]
fn a_quoted_value_starts_nothing() {
    // Markup inside attribute values is text to the parser: no script, comment or iframe
    // starts there, and the content after the tag stays.
    let cases = [
        (
            "<p><img alt=\"<script>\">Kept</p><p>More</p><script>x</script><p>End</p>",
            "<p><img alt=\"<script>\">Kept</p><p>More</p><p>End</p>",
        ),
        (
            "<div title=\"a>b<!--\">One</div><p>Two</p><!-- c --><p>Three",
            "<div title=\"a>b<!--\">One</div><p>Two</p><p>Three",
        ),
        (
            "<a href=\"/x\" data-embed='<iframe src=y>'>Link</a><p>After</p>",
            "<a href=\"/x\" data-embed='<iframe src=y>'>Link</a><p>After</p>",
        ),
    ];
    for (page, want) in cases {
        assert_eq!(strip_elements(page).html, want, "{page}");
    }
    // A noscript body long enough to be content starts after the whole tag.
    let body = "<p>Shown to readers without script.</p>".repeat(12);
    let page = format!("<noscript data-x=\"a>b\">{body}</noscript>");
    assert_eq!(strip_elements(&page).html, body);
}

#[test]
fn custom_elements_with_similar_names_are_kept() {
    assert_eq!(
        strip("<styled-box>x</styled-box>").html,
        "<styled-box>x</styled-box>"
    );
    assert_eq!(strip("<scripts>x</scripts>").html, "<scripts>x</scripts>");
}

#[test]
fn whitespace_between_tags_is_one_byte_until_a_pre() {
    assert_eq!(
        strip("<div>\n    <p>\n      Some  text\n    </p>\t\t<b> </b>\n</div>").html,
        "<div>\n<p>\nSome  text\n</p> <b> </b>\n</div>"
    );
    let pre = "<p>a</p>\n  <PRE>\n\n  code\n    more\n</PRE>\n   <p>b</p>";
    assert_eq!(strip(pre).html, pre.replacen(">\n  <", ">\n<", 1));
    assert_eq!(
        crate::content::extract(pre, None).text,
        crate::content::extract(&pre.replace(">\n  <", ">\n<"), None).text
    );
}
