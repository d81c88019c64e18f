//! Headless Chromium (Debian's, which `.ci/run` installs) loading a page, and reading the
//! DOM it leaves.

use crate::run_cli::{stderr, stdout};

/// The headless Chromium of `.ci/run` (Debian's), or `None` outside CI when it is missing.
pub fn chromium() -> Option<&'static str> {
    let path = "/usr/bin/chromium";
    if std::path::Path::new(path).exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI installs chromium: {path} is missing"
    );
    eprintln!("skipped: no {path}");
    None
}

/// The page at `url` as headless Chromium leaves it after `budget_ms` of virtual time
/// (its script run, its fetches answered), and what Chromium logged.
pub fn render_in_chromium(url: &str, extra: &[&str]) -> Option<(String, String)> {
    let browser = chromium()?;
    let profile = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some((stdout(&o), stderr(&o)))
}

/// The text of the element with `id` in `dom`.
pub fn text_of<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let start = at + dom[at..].find('>').unwrap() + 1;
    &dom[start..start + dom[start..].find('<').unwrap()]
}

/// The markup of the `svg` element with `id`.
pub fn svg_of<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom
        .find(&format!("<svg id=\"{id}\""))
        .unwrap_or_else(|| panic!("no svg #{id}"));
    &dom[at..at + dom[at..].find("</svg>").unwrap()]
}
