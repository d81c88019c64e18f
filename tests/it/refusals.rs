//! Nothing silent: every input decided or named, every setting the validator accepts
//! either run or refused in one line, never an abort.

use std::process::Command;

use crate::run_cli as cli;
use cli::{ReadOnly, crawldedup, snapshot, stderr, stdout};

fn article(i: usize) -> String {
    format!(
        "<html><body><article><p>Story {i}: the council of town number {i} met on a {} and \
         voted to repair the bridge after {} residents wrote about the potholes, the broken \
         railings near school {i} and the lights that stay dark all winter.</p></article>\
         </body></html>",
        ["Monday", "Tuesday", "Wednesday", "Thursday"][i % 4],
        i * 37 + 11
    )
}

#[test]
fn dedup_decides_every_readable_input_and_names_each_unreadable_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(path("a.html"), article(1)).unwrap();
    std::fs::write(path("c.html"), article(2)).unwrap();
    std::fs::create_dir(path("folder")).unwrap();
    let state = path("state");
    let o = crawldedup(&[
        "dedup",
        "--json",
        "--state-dir",
        &state,
        &path("a.html"),
        &path("missing.html"),
        &path("folder"),
        &path("c.html"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let files: Vec<String> = stdout(&o)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["verdict"], "unique", "{v}");
            v["file"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(files, [path("a.html"), path("c.html")]);
    let errors = stderr(&o);
    let errors: Vec<&str> = errors.lines().collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("error: ") && errors[0].contains("missing.html"));
    assert!(errors[1].starts_with("error: ") && errors[1].contains("folder"));
    // What was decided was kept.
    let o = crawldedup(&["dedup", "--json", "--state-dir", &state, &path("c.html")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("exact_duplicate"), "{}", stdout(&o));
}

#[test]
fn a_loopback_seed_without_the_flag_is_refused_at_once_and_a_later_run_with_it_fetches_it() {
    use crawldedup::fixture::{Site, serve};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::without_traps(3, 1))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (state, out) = (dir.path().join("state"), dir.path().join("out"));
    let seed = server.url("/");
    let crawl = |extra: &[&str]| {
        let mut args = vec!["--set", "crawl.max_depth=1"];
        args.extend_from_slice(extra);
        cli::crawl(&seed, &state, &out, &args)
    };
    let o = crawl(&[]);
    // Nothing could be fetched: exit 1, saying where the reasons are.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no seed could be fetched") && stderr(&o).contains("failures.jsonl"),
        "{}",
        stderr(&o)
    );
    let said: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.contains("--allow-private-ips"))
        .map(str::to_string)
        .collect();
    assert!(
        said.iter()
            .any(|l| l.contains("seed") && l.contains("refused")),
        "{}",
        stderr(&o)
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    let failures = std::fs::read_to_string(out.join("failures.jsonl")).unwrap();
    let failure: serde_json::Value =
        serde_json::from_str(failures.lines().next().unwrap()).unwrap();
    assert_eq!(failure["kind"], "refused", "{failure}");
    assert_eq!(failure["attempts"], 1, "not retried: {failure}");
    assert!(
        failure["reason"]
            .as_str()
            .unwrap()
            .contains("loopback address"),
        "{failure}"
    );
    let stats = |state: &std::path::Path| {
        let o = crawldedup(&["stats", "--json", "--state-dir", state.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()
    };
    assert_eq!(stats(&state)["totals"]["failures"], 1);
    // The same state directory, with the flag: the seed is fetched and stored, and its
    // earlier failure no longer counts.
    let o = crawl(&["--allow-private-ips"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pages = std::fs::read_to_string(out.join("pages.jsonl")).unwrap();
    assert!(
        pages.contains(&format!("\"final_url\":\"{}\"", server.url("/"))),
        "{pages}"
    );
    let after = stats(&state);
    assert_eq!(after["totals"]["failures"], 0, "{after}");
    assert!(after["totals"]["stored"].as_u64().unwrap() >= 1, "{after}");
}

#[test]
fn a_size_the_machine_cannot_give_is_refused_in_one_line_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let page = dir.path().join("page.html");
    std::fs::write(&page, article(3)).unwrap();
    let (state, page) = (state.to_str().unwrap(), page.to_str().unwrap());
    for (command, setting, key) in [
        (
            vec!["serve", "--listen", "127.0.0.1:0", "--state-dir", state],
            "url_filter.expected_urls=4000000000000",
            "url_filter.expected_urls",
        ),
        (
            vec!["dedup", "--state-dir", state, page],
            "dedup.expected_pages=4000000000",
            "dedup.expected_pages",
        ),
        (
            vec![
                "crawl",
                "--seed",
                "http://127.0.0.1:9/",
                "--state-dir",
                state,
            ],
            "dedup.expected_pages=4000000000",
            "dedup.expected_pages",
        ),
    ] {
        let mut args = command.clone();
        args.extend(["--set", setting]);
        let o = crawldedup(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let said = stderr(&o);
        assert_eq!(said.lines().count(), 1, "{said}");
        assert!(said.contains(key) && said.contains("GiB"), "{said}");
        assert!(
            !std::path::Path::new(state).exists(),
            "{args:?} created the state directory"
        );
    }
    // Under an address-space limit (ulimit -v), a size that fits the machine but not the
    // limit is refused the same way instead of aborting at its allocation.
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 2000000 && exec {} dedup --state-dir {state} --set \
             dedup.expected_pages=20000000 {page}",
            env!("CARGO_BIN_EXE_crawldedup")
        ))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("ulimit -v"), "{}", stderr(&o));
}

/// A populated `dedup` state directory in `dir`.
fn populated(dir: &std::path::Path) -> String {
    let state = dir.join("state");
    let mut args = vec![
        "dedup".to_string(),
        "--state-dir".into(),
        state.to_str().unwrap().into(),
    ];
    for i in 0..5 {
        let page = dir.join(format!("p{i}.html"));
        std::fs::write(&page, article(i)).unwrap();
        args.push(page.to_str().unwrap().into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = crawldedup(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    state.to_str().unwrap().to_string()
}

#[test]
fn verify_only_reads_and_repair_refuses_a_read_only_or_held_directory() {
    let dir = tempfile::tempdir().unwrap();
    let state = populated(dir.path());
    let Some(read_only) = ReadOnly::mount(&state, &dir.path().join("backup")) else {
        // Mounting needs root; CI runs as root and must run this.
        assert!(
            std::env::var_os("CI").is_none(),
            "could not mount read-only"
        );
        eprintln!("skipped: a read-only bind mount needs root");
        return;
    };
    let backup = read_only.0.to_str().unwrap().to_string();
    let before = snapshot(std::path::Path::new(&state));
    let o = crawldedup(&["verify", "--state-dir", &backup]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let lines = stdout(&o);
    assert!(
        lines.starts_with("state directory: fine: read-only"),
        "{lines}"
    );
    assert!(lines.contains("index: fine: 5 documents"), "{lines}");
    assert!(
        !lines.contains("crawldedup-verify-"),
        "names the copy: {lines}"
    );
    assert_eq!(snapshot(std::path::Path::new(&state)), before);
    let o = crawldedup(&["repair", "--state-dir", &backup]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("read-only"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("--accept-loss"), "{}", stderr(&o));
    drop(read_only);

    // Held by a live stage: repair says so, and suggests no loss.
    let stage = crawldedup::Dedup::builder()
        .kind(crawldedup::dedup::StateKind::Dedup)
        .open(std::path::Path::new(&state))
        .unwrap();
    let o = crawldedup(&["repair", "--state-dir", &state]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("another process holds"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("--accept-loss"), "{}", stderr(&o));
    drop(stage);
}

#[test]
fn serve_refuses_a_port_in_use_and_a_request_limit_that_refuses_everything_before_any_state() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let o = crawldedup(&[
        "serve",
        "--listen",
        &addr,
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains(&addr), "{}", stderr(&o));
    assert!(!state.exists(), "the state directory was created");
    for bytes in ["0", "1023"] {
        let o = crawldedup(&[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--max-request-bytes",
            bytes,
            "--state-dir",
            state.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("--max-request-bytes"), "{}", stderr(&o));
        assert!(!state.exists());
    }
}

#[test]
fn checkpoint_every_0_means_only_at_the_end_for_a_crawl_as_for_the_sidecar() {
    use crawldedup::fixture::{Site, serve};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(serve(Site::without_traps(4, 2))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = crawldedup(&[
        "crawl",
        "--json",
        "--allow-private-ips",
        "--seed",
        &server.url("/"),
        "--state-dir",
        dir.path().join("state").to_str().unwrap(),
        "--out",
        dir.path().join("out").to_str().unwrap(),
        "--checkpoint-every",
        "0",
        "--set",
        "crawl.per_host_delay_ms=20",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(
        summary["totals"]["stored"].as_u64().unwrap() > 5,
        "{summary}"
    );
    assert_eq!(
        summary["totals"]["seq"], 1,
        "one checkpoint, at the end: {summary}"
    );
}

#[test]
fn a_damaged_database_is_one_line_without_the_stores_own_log_and_random_bytes_are_no_text() {
    let dir = tempfile::tempdir().unwrap();
    let state = populated(dir.path());
    let db = std::path::Path::new(&state).join("index/db");
    let bytes = std::fs::read(&db).unwrap();
    let mut damaged = bytes.clone();
    for b in &mut damaged[bytes.len() / 3..bytes.len() / 2] {
        *b ^= 0x5a;
    }
    std::fs::write(&db, &damaged).unwrap();
    let page = dir.path().join("p0.html");
    let o = crawldedup(&["dedup", "--state-dir", &state, page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(!stderr(&o).contains("ERROR"), "{}", stderr(&o));

    // Random bytes whose first NUL is past the first KiB: not text.
    let mut state_rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut random: Vec<u8> = (0..4096)
        .map(|_| {
            state_rng ^= state_rng << 13;
            state_rng ^= state_rng >> 7;
            state_rng ^= state_rng << 17;
            (state_rng as u8).max(1)
        })
        .collect();
    random[1092] = 0;
    let file = dir.path().join("random.html");
    std::fs::write(&file, &random).unwrap();
    let o = crawldedup(&["dedup", "--json", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("\"verdict\":\"no_text\""),
        "{}",
        stdout(&o)
    );
}

#[test]
fn config_prints_every_key_and_each_optional_one_commented_with_what_unset_means() {
    let o = crawldedup(&["config"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = stdout(&o);
    // Every key the documented crawler.toml names, set or commented out, is printed.
    let shipped =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/crawler.toml")).unwrap();
    let key_of = |line: &str| {
        let line = line.trim_start_matches("# ");
        let (key, _) = line.split_once(" = ")?;
        (!key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .then(|| key.to_string())
    };
    let printed_keys: Vec<String> = printed.lines().filter_map(key_of).collect();
    for key in shipped.lines().filter_map(key_of) {
        assert!(
            printed_keys.contains(&key),
            "`{key}` is not printed:\n{printed}"
        );
    }
    for optional in ["recrawl_after", "retention"] {
        let line = printed
            .lines()
            .find(|l| l.starts_with(&format!("# {optional} = ")))
            .unwrap_or_else(|| panic!("no {optional}:\n{printed}"));
        assert!(line.contains("(unset: "), "{line}");
    }
    // Set, it is printed as a key, and what is printed loads back to the same.
    let o = crawldedup(&["config", "--set", "dedup.retention=2h"]);
    assert!(
        stdout(&o).lines().any(|l| l == "retention = \"2h\""),
        "{}",
        stdout(&o)
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("printed.toml");
    std::fs::write(&file, &printed).unwrap();
    let again = crawldedup(&["config", "--config", file.to_str().unwrap()]);
    assert_eq!(stdout(&again), printed);
}
