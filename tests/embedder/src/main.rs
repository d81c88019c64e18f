//! An embedder's use of the page stage, built as a dependency: one page stored, its copy
//! found, in an index opened, closed and opened again.

use crawldedup::{Dedup, PageVerdict};

const ARTICLE: &str = "<html><head><title>Harbour</title></head><body><nav>Home | News</nav>\
    <article><p>The harbour authority opened the new breakwater on Tuesday after three years \
    of work, and the first ferries used the sheltered berth the same evening.</p><p>Fishermen \
    said the calmer water would let the small boats land their catch in winter storms that \
    used to keep them at sea for days.</p></article></body></html>";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let state = std::env::temp_dir().join(format!("crawldedup-embedder-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&state);
    let dedup = Dedup::builder().expected_urls(1_000).open(&state)?;
    let first = dedup.check_page("https://example.com/a", ARTICLE.as_bytes(), Some("text/html"))?;
    if !matches!(first, PageVerdict::Unique { .. }) {
        return Err(format!("the first page: {}, not unique", first.label()).into());
    }
    dedup.close()?;
    let dedup = Dedup::builder().expected_urls(1_000).open(&state)?;
    let copy = dedup.check_page("https://example.com/b", ARTICLE.as_bytes(), Some("text/html"))?;
    let original = copy.duplicate().map(|d| d.of.name.clone());
    if original.as_deref() != Some("https://example.com/a") {
        return Err(format!("the copy after a reopen: {}, not a duplicate of /a", copy.label()).into());
    }
    dedup.close()?;
    std::fs::remove_dir_all(&state)?;
    println!("embedder: a page stored, its copy found after a reopen");
    Ok(())
}
