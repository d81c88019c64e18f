//! Nothing silent: every input decided or named, every setting the validator accepts
//! either run or refused in one line, never an abort.

use std::process::{Command, Output};

fn crawldedup(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crawldedup"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

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
        let mut args = vec![
            "crawl",
            "--seed",
            &seed,
            "--state-dir",
            state.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--set",
            "crawl.max_depth=1",
        ];
        args.extend_from_slice(extra);
        crawldedup(&args)
    };
    let o = crawl(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
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
    // The same state directory, with the flag: the seed is fetched and stored.
    let o = crawl(&["--allow-private-ips"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pages = std::fs::read_to_string(out.join("pages.jsonl")).unwrap();
    assert!(
        pages.contains(&format!("\"final_url\":\"{}\"", server.url("/"))),
        "{pages}"
    );
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
