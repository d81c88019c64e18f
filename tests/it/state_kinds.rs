//! A state directory knows which command keeps it: another one is refused in one line
//! naming both, unless it asks to share, and then nothing made durable is lost.

use std::path::Path;

use crate::run_cli as cli;
use cli::{crawldedup, snapshot, stderr, stdout};

fn page(dir: &Path, name: &str, i: usize) -> String {
    let site = crawldedup::fixture::Site::new(61, 4);
    let a = &site.articles()[i];
    let body: String = a.paragraphs.iter().map(|p| format!("<p>{p}</p>")).collect();
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "<html><head><title>{}</title></head><body><article>{body}</article></body></html>",
            a.title
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

fn verdict(o: &std::process::Output) -> String {
    let line: serde_json::Value = serde_json::from_str(stdout(o).lines().next().unwrap()).unwrap();
    line["verdict"].as_str().unwrap().to_string()
}

/// A crawl's directory, then `dedup` on it, then two more crawls: without `--share-state`
/// `dedup` is refused and nothing changes; with it, its page is kept by every crawl after,
/// and nothing is refused as damaged.
#[test]
fn dedup_sharing_a_crawl_s_directory_loses_nothing_and_without_sharing_is_refused() {
    use crawldedup::fixture::{Site, serve};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::without_traps(5, 1))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let seed = server.url("/");
    let crawl = || {
        let o = cli::crawl(&seed, &state, &out, &["--allow-private-ips"]);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    crawl();
    let other = page(dir.path(), "other.html", 3);
    let st = state.to_str().unwrap();

    let before = snapshot(&state);
    let o = crawldedup(&["dedup", "--json", "--state-dir", st, &other]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("a crawl's") && err.contains("a dedup run's"),
        "{err}"
    );
    assert!(err.contains("--share-state"), "{err}");
    assert_eq!(
        snapshot(&state),
        before,
        "a refusal changed the state directory"
    );

    let shared_dedup = || {
        let o = crawldedup(&[
            "dedup",
            "--json",
            "--share-state",
            "--state-dir",
            st,
            &other,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    assert_eq!(verdict(&shared_dedup()), "unique");
    crawl();
    crawl();
    let o = crawldedup(&["verify", "--state-dir", st, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let o = shared_dedup();
    assert_eq!(
        verdict(&o),
        "exact_duplicate",
        "the crawl dropped dedup's page"
    );
}

/// `crawl` on a sidecar's directory and `serve` on a crawl's are refused, each in one line
/// naming both kinds; with `--share-state` the crawl keeps the sidecar's pages.
#[test]
fn crawl_and_serve_refuse_each_other_s_directories_unless_shared() {
    let dir = tempfile::tempdir().unwrap();
    let sidecar = dir.path().join("sidecar");
    let st = sidecar.to_str().unwrap();
    // A sidecar's directory: `serve` opens it and stops at once (its port is taken).
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let o = crawldedup(&["serve", "--listen", &addr, "--state-dir", st]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        !sidecar.exists(),
        "a refused listen made the state directory"
    );
    drop(taken);

    // A dedup run's directory, refused by serve and by crawl.
    let first = page(dir.path(), "first.html", 0);
    let o = crawldedup(&["dedup", "--json", "--state-dir", st, &first]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = snapshot(&sidecar);
    for args in [
        vec!["serve", "--listen", "127.0.0.1:0", "--state-dir", st],
        vec![
            "crawl",
            "--seed",
            "http://127.0.0.1:9/",
            "--state-dir",
            st,
            "--out",
            "/nonexistent/out",
        ],
    ] {
        let o = crawldedup(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("a dedup run's"), "{args:?}: {err}");
    }
    assert_eq!(
        snapshot(&sidecar),
        before,
        "a refusal changed the state directory"
    );

    // Shared: the crawl runs there, and keeps the page.
    use crawldedup::fixture::{Site, serve};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::without_traps(9, 1))).unwrap();
    let out = dir.path().join("out");
    let flags = ["--share-state", "--allow-private-ips"];
    let o = cli::crawl(&server.url("/"), &sidecar, &out, &flags);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = crawldedup(&["dedup", "--json", "--state-dir", st, &first]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(verdict(&o), "exact_duplicate", "the crawl dropped the page");
}
