//! The command line's contracts: one output line per input, exit codes, one-line errors.

use std::process::{Command, Output};

use crate::run_cli as cli;
use cli::{crawldedup, stderr, stdout};

#[test]
fn canonicalize_prints_one_line_per_input_in_order() {
    let o = crawldedup(&[
        "canonicalize",
        "HTTP://Example.com:80/a?b=1&a=2#x",
        "mailto:someone@example.com",
        "http://h.com/?utm_source=x",
        "::not a url::",
    ]);
    assert_eq!(o.status.code(), Some(1), "any bad input gives exit code 1");
    let lines: Vec<_> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0], "http://example.com/a?a=2&b=1");
    assert!(
        lines[1].starts_with("error: unsupported scheme `mailto:`"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "http://h.com/");
    assert!(lines[3].starts_with("error: not a URL"), "{}", lines[3]);
}

#[test]
fn canonicalize_succeeds_when_all_inputs_are_good() {
    let o = crawldedup(&[
        "canonicalize",
        "--base",
        "http://h.com/a/b",
        "../c",
        "d?x=1#f",
    ]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "http://h.com/c\nhttp://h.com/a/d?x=1\n");
}

#[test]
fn canonicalize_honours_config_overrides() {
    let o = crawldedup(&[
        "canonicalize",
        "--set",
        "url_filter.fold_www=true",
        "http://www.h.com/",
    ]);
    assert_eq!(stdout(&o), "http://h.com/\n");
}

#[test]
fn bloom_params_prints_the_formula() {
    let o = crawldedup(&["bloom-params", "--n", "1000000", "--p", "0.01"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("m (bits)          9585059"), "{out}");
    assert!(out.contains("k (hashes)        7"), "{out}");
    assert!(out.contains("bytes             1198136"), "{out}");
}

#[test]
fn bloom_params_refuses_a_rate_out_of_range() {
    let o = crawldedup(&["bloom-params", "--n", "10", "--p", "1.5"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("strictly between 0 and 1"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(o.status.code(), Some(2), "a bad argument, nothing started");
}

#[test]
fn index_plan_refuses_what_it_cannot_plan_with_exit_2() {
    for (args, says) in [
        (["--n", "0", "--k", "3"], "--n: must be at least 1"),
        (["--n", "1000", "--k", "99"], "--k 99: no layout"),
    ] {
        let o = crawldedup(&[&["index-plan"][..], &args[..]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains(says), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn config_errors_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        "[url_filter]\nexpected_urls = 100\nfalse_positiv_rate = 0.1\n",
    )
    .unwrap();
    let o = crawldedup(&["config", "--config", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.toml"), "{err}");
    assert!(err.contains("false_positiv_rate"), "{err}");
    assert!(!err.contains("panicked"));

    std::fs::write(&path, "[url_filter]\nfalse_positive_rate = 0\n").unwrap();
    let o = crawldedup(&["config", "--config", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("url_filter.false_positive_rate"));

    std::fs::write(
        &path,
        "[cluster]\nnodes = [\"redis://127.0.0.1:7000\"]\nworker_id = \"a\"\nwait_for_workers = 0\n",
    )
    .unwrap();
    let o = crawldedup(&["config", "--config", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cluster.wait_for_workers"), "{err}");

    std::fs::write(&path, "[crawl\nseeds = 1").unwrap();
    let o = crawldedup(&["config", "--config", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));

    let o = crawldedup(&["config", "--config", "/no/such/file.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/no/such/file.toml"));
}

#[test]
fn the_shipped_crawler_toml_is_the_defaults() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/crawler.toml");
    let from_file = crawldedup::Config::load(std::path::Path::new(path), &[]).unwrap();
    assert_eq!(from_file, crawldedup::Config::default());
}

#[test]
fn shipped_seed_lists_parse() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let seeds = crawldedup::config::read_seed_file(&path).unwrap();
        assert!(!seeds.is_empty(), "{}", path.display());
    }
}

#[test]
fn every_subcommand_has_help() {
    for sub in [
        "demo",
        "canonicalize",
        "bloom-params",
        "config",
        "index-plan",
        "extract",
        "simhash",
        "dedup",
        "crawl",
        "stats",
    ] {
        let o = crawldedup(&[sub, "--help"]);
        assert!(o.status.success(), "{sub}");
        assert!(stdout(&o).contains("Usage"), "{sub}");
    }
}

/// The subcommands `crawldedup --help` lists (without `help`).
fn subcommands() -> Vec<String> {
    let o = crawldedup(&["--help"]);
    let help = stdout(&o);
    let listed = help
        .split("Commands:")
        .nth(1)
        .expect("a Commands section")
        .split("\n\n")
        .next()
        .unwrap();
    listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

fn repository_file(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_readme_and_the_commands_page_list_every_subcommand() {
    let subs = subcommands();
    assert!(subs.len() >= 14, "{subs:?}");
    let readme = repository_file("README.md");
    let commands = repository_file("docs/commands.md");
    for sub in &subs {
        let o = crawldedup(&[sub, "--help"]);
        assert!(o.status.success() && stdout(&o).contains("Usage"), "{sub}");
        assert!(
            readme.contains(&format!("| `{sub}` |")),
            "README.md: no row for `{sub}` in the commands table"
        );
        assert!(
            commands.contains(&format!("| `crawldedup {sub}")),
            "docs/commands.md: no row for `crawldedup {sub}`"
        );
    }
}

#[test]
fn every_json_field_of_dedup_and_extract_is_documented() {
    let dir = tempfile::tempdir().unwrap();
    let original = fixture("article");
    let page = std::fs::read_to_string(&original).unwrap();
    let same = dir.path().join("same.html");
    let edited = dir.path().join("edited.html");
    std::fs::write(&same, page.replace("Most read", "Popular today")).unwrap();
    std::fs::write(
        &edited,
        page.replace("northern estuary", "southern estuary"),
    )
    .unwrap();
    let (same, edited) = (same.to_str().unwrap(), edited.to_str().unwrap());
    let forum = fixture("forum");
    let runs = [
        crawldedup(&["dedup", "--json", &original, same, edited, &forum]),
        crawldedup(&["extract", "--json", &original, &forum]),
    ];
    let commands = repository_file("docs/commands.md");
    let mut fields = std::collections::BTreeSet::new();
    for o in &runs {
        assert!(o.status.success(), "{}", stderr(o));
        for line in stdout(o).lines() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            fields.extend(value.as_object().unwrap().keys().cloned());
        }
    }
    // The three verdicts were all met, so their fields were all printed.
    for expected in [
        "verdict",
        "of",
        "distance",
        "similarity",
        "containment",
        "simhash",
    ] {
        assert!(
            fields.contains(expected),
            "{expected} not printed: {fields:?}"
        );
    }
    for field in &fields {
        assert!(
            commands.contains(&format!("`{field}`")) || commands.contains(&format!("\"{field}\"")),
            "docs/commands.md does not document the JSON field {field}"
        );
    }
    // `dedup --help` names every field `dedup --json` printed.
    let help = stdout(&crawldedup(&["dedup", "--help"]));
    for line in stdout(&runs[0]).lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        for field in value.as_object().unwrap().keys() {
            assert!(
                help.contains(&format!("\"{field}\"")),
                "dedup --help does not name the JSON field {field}"
            );
        }
    }
}

#[test]
fn demo_runs_offline() {
    let o = crawldedup(&["demo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("24 links: 7 to fetch, 13 dropped"), "{out}");
    // The offline crawl: the numbers follow from the generated site and the seed.
    for line in [
        "stored       68",
        "duplicates   156",
        "exact_duplicate  106",
        "near_duplicate   50",
        "redirect_loop    1",
        "robots           2",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
}

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/pages/{name}.html",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn extract_prints_main_text_or_one_json_line_per_file() {
    let article = fixture("article");
    let forum = fixture("forum");
    let o = crawldedup(&["extract", &article]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o)
            .starts_with("Tidal energy gets a second look\n\nEngineers in the northern estuary"),
        "{}",
        stdout(&o)
    );

    let o = crawldedup(&["extract", "--json", &article, &forum]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["file"], article.as_str());
    assert_eq!(lines[0]["title"], "Tidal energy gets a second look");
    assert!(
        lines[1]["text"]
            .as_str()
            .unwrap()
            .contains("Drying works too")
    );
    assert!(lines[0].get("blocks").is_none(), "blocks are asked for");

    // --blocks: one kind per block of the text, and the same text.
    let o = crawldedup(&["extract", "--json", "--blocks", &article]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(line["text"], lines[0]["text"]);
    let kinds = line["blocks"].as_array().unwrap();
    assert_eq!(
        kinds.len(),
        line["text"].as_str().unwrap().split("\n\n").count()
    );
    assert_eq!(kinds[0], "story");
    assert!(kinds.iter().any(|k| k == "list"), "{kinds:?}");
}

#[test]
fn extract_reads_stdin_and_names_a_missing_file() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_crawldedup"))
        .args(["extract"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"<p>from standard input</p>")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(stdout(&o), "from standard input\n");

    let o = crawldedup(&["extract", "/no/such/page.html"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/no/such/page.html"), "{err}");
}

/// A reader that stops early (`crawldedup extract page.html | head`) is not an error: the
/// command stops writing and exits quietly.
#[test]
fn extract_stops_quietly_when_the_reader_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("long.html");
    let paragraphs: String = (0..5_000)
        .map(|i| format!("<p>Paragraph {i} of a long page, long enough to fill a pipe.</p>"))
        .collect();
    std::fs::write(&page, format!("<html><body>{paragraphs}</body></html>")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_crawldedup"))
        .args(["extract", page.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Read;
    let mut start = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut start).unwrap();
    // The read end is closed here; the output (300 KB) is far larger than a pipe holds.
    let o = child.wait_with_output().unwrap();
    assert_eq!(&start, b"Paragraph 0 of a");
    assert!(o.status.success(), "{:?}", o.status);
    assert_eq!(stderr(&o), "");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

#[test]
fn extract_reads_gzip_pages_and_names_each_input_it_cannot_use() {
    let dir = tempfile::tempdir().unwrap();
    let article = fixture("article");
    let plain = crawldedup(&["extract", &article]);
    assert!(plain.status.success());
    let compressed = dir.path().join("article.html.gz");
    std::fs::write(&compressed, gzip(&std::fs::read(&article).unwrap())).unwrap();
    let binary = dir.path().join("image.html");
    std::fs::write(&binary, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let corrupt = dir.path().join("cut.html.gz");
    std::fs::write(&corrupt, &gzip(b"<p>a page</p>")[..12]).unwrap();
    // A gzip bomb: 257 MiB of spaces in about 250 KB; decompression stops at the cap.
    let bomb = dir.path().join("bomb.html.gz");
    std::fs::write(&bomb, gzip(&vec![b' '; 257 << 20])).unwrap();
    let missing = dir.path().join("missing.html");
    let names: Vec<String> = [&compressed, &binary, &corrupt, &bomb, &missing]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut args = vec!["extract", names[0].as_str()];
    args.extend(names[1..].iter().map(String::as_str));
    args.push(&article);
    let o = crawldedup(&args);
    assert_eq!(o.status.code(), Some(1), "inputs were passed over");
    assert_eq!(
        stdout(&o),
        format!("{0}{0}", stdout(&plain)),
        "the compressed page and the plain one give the same text; nothing else is printed"
    );
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "one line per input passed over: {err}");
    assert!(
        lines[0].contains(&names[1]) && lines[0].contains("binary data"),
        "{err}"
    );
    assert!(
        lines[1].contains(&names[2]) && lines[1].contains("corrupt gzip"),
        "{err}"
    );
    assert!(
        lines[2].contains(&names[3]) && lines[2].contains("larger than 256 MiB"),
        "{err}"
    );
    assert!(lines[3].contains(&names[4]), "{err}");
}

#[test]
fn simhash_prints_16_hex_digits_per_input() {
    let article = fixture("article");
    let o = crawldedup(&["simhash", &article, &article]);
    assert!(o.status.success());
    let lines: Vec<_> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], lines[1]);
    let hex = lines[0].split_whitespace().next().unwrap();
    assert_eq!(hex.len(), 16);
    assert!(hex.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(lines[0].ends_with(&article));

    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("t.txt");
    std::fs::write(&text, "plain words, not markup").unwrap();
    let o = crawldedup(&["simhash", "--text", text.to_str().unwrap()]);
    let expected = crawldedup::Fingerprint::of("plain words, not markup").simhash;
    assert!(
        stdout(&o).starts_with(&expected.to_string()),
        "{}",
        stdout(&o)
    );
}

#[test]
fn dedup_reports_each_file_in_order_and_resumes_from_its_state_dir() {
    let dir = tempfile::tempdir().unwrap();
    let original = fixture("article");
    let same = dir.path().join("same.html");
    let edited = dir.path().join("edited.html");
    let page = std::fs::read_to_string(&original).unwrap();
    std::fs::write(&same, page.replace("Most read", "Popular today")).unwrap();
    std::fs::write(
        &edited,
        page.replace("northern estuary", "southern estuary"),
    )
    .unwrap();
    let state = dir.path().join("state");
    let (same, edited, state) = (
        same.to_str().unwrap(),
        edited.to_str().unwrap(),
        state.to_str().unwrap(),
    );
    let forum = fixture("forum");
    let o = crawldedup(&[
        "dedup",
        "--json",
        "--state-dir",
        state,
        &original,
        same,
        edited,
        &forum,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["file"], original.as_str());
    assert_eq!(lines[0]["verdict"], "unique");
    assert_eq!(lines[0]["simhash"].as_str().unwrap().len(), 16);
    assert_eq!(
        lines[1],
        serde_json::json!({"file": same, "verdict": "exact_duplicate", "of": original, "distance": 0})
    );
    assert_eq!(lines[2]["verdict"], "near_duplicate");
    assert_eq!(lines[2]["of"], original.as_str());
    assert!(lines[2]["distance"].as_u64().is_some());
    assert!(
        lines[2]["similarity"].as_f64().unwrap() >= 0.5,
        "{}",
        lines[2]
    );
    assert!(
        lines[2]["containment"].as_f64().unwrap() >= 0.5,
        "{}",
        lines[2]
    );
    assert_eq!(lines[3]["verdict"], "unique");

    // A second run on the same state directory remembers the first.
    let o = crawldedup(&["dedup", "--json", "--state-dir", state, &forum]);
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(line["verdict"], "exact_duplicate");
    assert_eq!(line["of"], forum.as_str());
}

#[test]
fn crawl_setup_errors_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let out = dir.path().join("out");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec!["--seeds".into(), "/no/such/seeds.txt".into()],
        vec!["--seed".into(), "not a url".into()],
        vec![],
        vec![
            "--seed".into(),
            "http://example.com/".into(),
            "--state-dir".into(),
            file.join("sub").to_str().unwrap().into(),
        ],
        vec![
            "--set".into(),
            "crawl.max_dept=3".into(),
            "--seed".into(),
            "http://example.com/".into(),
        ],
    ];
    for extra in cases {
        let mut args = vec![
            "crawl".to_string(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ];
        if !extra.contains(&"--state-dir".to_string()) {
            args.extend(["--state-dir".to_string(), state.to_str().unwrap().into()]);
        }
        args.extend(extra.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = crawldedup(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn stats_on_a_directory_without_a_crawl_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let o = crawldedup(&["stats", "--state-dir", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no crawl here"), "{err}");
}

#[test]
fn a_state_directory_of_an_older_format_is_refused_in_one_line_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let article = fixture("article");
    let o = crawldedup(&["dedup", "--state-dir", state.to_str().unwrap(), &article]);
    assert!(o.status.success(), "{}", stderr(&o));
    // What the previous format (index format 2, fingerprint version 2) wrote as its layout.
    let layout: Vec<u8> = [2u32, 2, 3, 6]
        .iter()
        .flat_map(|w| w.to_be_bytes())
        .collect();
    {
        let db = sled::open(state.join("index")).unwrap();
        db.open_tree("meta")
            .unwrap()
            .insert("layout", layout.clone())
            .unwrap();
        db.flush().unwrap();
    }
    let o = crawldedup(&["dedup", "--state-dir", state.to_str().unwrap(), &article]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("index format 2 and fingerprint version 2"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "this build reads format {} and fingerprint version {}",
            crawldedup::index::INDEX_FORMAT_VERSION,
            crawldedup::fingerprint::FINGERPRINT_VERSION
        )),
        "{err}"
    );
    assert!(err.contains("start a new state directory"), "{err}");
    assert!(!err.contains("panicked"));
    // Nothing was overwritten.
    let db = sled::open(state.join("index")).unwrap();
    assert_eq!(
        db.open_tree("meta")
            .unwrap()
            .get("layout")
            .unwrap()
            .unwrap()
            .to_vec(),
        layout
    );
}

#[test]
fn a_damaged_index_is_refused_in_one_line_and_its_pages_never_come_back_unique() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let article = fixture("article");
    let o = crawldedup(&["dedup", "--state-dir", state.to_str().unwrap(), &article]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("unique"), "{}", stdout(&o));
    // Cut every sled data file to nothing, as a full disk or a bad copy would.
    for entry in std::fs::read_dir(state.join("index")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_file() && name != "conf" && !name.starts_with("crawldedup-manifest") {
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_len(0)
                .unwrap();
        }
    }
    let o = crawldedup(&["dedup", "--state-dir", state.to_str().unwrap(), &article]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("damaged"), "{err}");
    assert!(err.contains("restore the state directory"), "{err}");
    assert!(!stdout(&o).contains("unique"), "{}", stdout(&o));
}

/// A crawl of a one-page site on loopback into `dir` (state and out), by the binary.
fn crawl_once(dir: &std::path::Path, seed: &str) -> Output {
    crawldedup(&[
        "crawl",
        "--seed",
        seed,
        "--state-dir",
        dir.join("state").to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
        "--set",
        "crawl.allow_private_ips=true",
        "--set",
        "crawl.per_host_delay_ms=0",
        "--set",
        "crawl.max_depth=1",
        "--set",
        "crawl.request_timeout_ms=800",
    ])
}

#[test]
fn an_emptied_or_damaged_crawl_database_is_one_line_and_rolls_nothing_back() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let site = crawldedup::fixture::Site::new(3, 2);
    let server = runtime.block_on(crawldedup::fixture::serve(site)).unwrap();
    let seed = server.url("/");
    let dir = tempfile::tempdir().unwrap();
    let o = crawl_once(dir.path(), &seed);
    assert!(o.status.success(), "{}", stderr(&o));
    let pages = std::fs::read(dir.path().join("out/pages.jsonl")).unwrap();
    assert!(!pages.is_empty());
    let db_file = dir.path().join("state/crawl/db");
    let original = std::fs::read(&db_file).unwrap();
    for (what, bytes) in [
        ("zero length", Vec::new()),
        ("overwritten", {
            let mut b = original.clone();
            let mid = b.len() / 3;
            for x in &mut b[mid..(mid + 512).min(original.len())] {
                *x = 0xa5;
            }
            b
        }),
    ] {
        std::fs::write(&db_file, &bytes).unwrap();
        let o = crawl_once(dir.path(), &seed);
        let err = stderr(&o);
        if o.status.success() {
            // The damage hit bytes sled no longer reads: the crawl must then have found its
            // checkpoint and changed nothing it had stored.
            assert_eq!(
                std::fs::read(dir.path().join("out/pages.jsonl")).unwrap(),
                pages,
                "{what}"
            );
            continue;
        }
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
        assert!(err.contains("damaged"), "{what}: {err}");
        assert!(!err.contains("backtrace"), "{what}: {err}");
        // Nothing was rolled back.
        assert_eq!(
            std::fs::read(dir.path().join("out/pages.jsonl")).unwrap(),
            pages,
            "{what}"
        );
    }
}

/// A finished crawl of a small fixture site in a new folder: (folder, server, seed).
fn crawled() -> (tempfile::TempDir, tokio::runtime::Runtime, String) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(crawldedup::fixture::serve(crawldedup::fixture::Site::new(
            3, 2,
        )))
        .unwrap();
    let seed = server.url("/");
    // The server lives as long as the runtime's worker threads.
    std::mem::forget(server);
    let dir = tempfile::tempdir().unwrap();
    let o = crawl_once(dir.path(), &seed);
    assert!(o.status.success(), "{}", stderr(&o));
    (dir, runtime, seed)
}

/// `verify` or `repair` (with `extra`) on the crawl in `dir`: exit code and stdout lines.
fn state_command(command: &str, dir: &std::path::Path, extra: &[&str]) -> (i32, Vec<String>) {
    let (state, out) = (dir.join("state"), dir.join("out"));
    let mut args = vec![
        command,
        "--state-dir",
        state.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = crawldedup(&args);
    assert!(stderr(&o).trim().is_empty(), "{}", stderr(&o));
    (
        o.status.code().unwrap(),
        stdout(&o).lines().map(str::to_string).collect(),
    )
}

fn line<'a>(lines: &'a [String], part: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l.starts_with(&format!("{part}: ")))
        .unwrap_or_else(|| panic!("no `{part}` line in {lines:?}"))
}

#[test]
fn verify_names_each_damaged_part_and_repair_mends_what_it_can() {
    let (dir, _runtime, seed) = crawled();
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 0, "{lines:?}");
    for part in [
        "crawl database",
        "frontier",
        "URL filter",
        "index",
        "outputs",
    ] {
        assert!(line(&lines, part).contains(": fine: "), "{lines:?}");
    }
    let pages_path = dir.path().join("out/pages.jsonl");
    let pages = std::fs::read(&pages_path).unwrap();

    // Lines past the checkpoint: fine for verify, cut back by repair.
    let mut longer = pages.clone();
    longer.extend_from_slice(b"{\"torn\": tr");
    std::fs::write(&pages_path, &longer).unwrap();
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(line(&lines, "outputs").contains("past the checkpoint"));
    let (code, lines) = state_command("repair", dir.path(), &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        line(&lines, "outputs").contains("cut back by 11 bytes"),
        "{lines:?}"
    );
    assert_eq!(std::fs::read(&pages_path).unwrap(), pages);

    // A truncated output: named by verify, not rebuilt by repair.
    std::fs::write(&pages_path, &pages[..pages.len() / 2]).unwrap();
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(line(&lines, "outputs").contains("pages.jsonl"), "{lines:?}");
    let (code, lines) = state_command("repair", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "outputs").contains("could not recover"),
        "{lines:?}"
    );
    std::fs::write(&pages_path, &pages).unwrap();

    // A damaged URL filter: a crawl's is rebuilt from its frontier, exactly, and the
    // damaged file set aside, never deleted.
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 0, "{lines:?}");
    let filter_line = line(&lines, "URL filter").to_string();
    let bloom = dir.path().join("state/seen-urls.bloom");
    let mut bytes = std::fs::read(&bloom).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&bloom, &bytes).unwrap();
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(line(&lines, "URL filter").contains("damaged"), "{lines:?}");
    let (code, lines) = state_command("repair", dir.path(), &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        line(&lines, "URL filter").contains("rebuilt from the")
            && line(&lines, "URL filter").contains("crawl's frontier"),
        "{lines:?}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("state/seen-urls.bloom.damaged")).unwrap(),
        bytes
    );
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert_eq!(
        line(&lines, "URL filter"),
        filter_line,
        "the same URLs, at the same checkpoint"
    );

    // The index's manifest lost: named by verify; repair --accept-loss writes one for what
    // the database holds, and the crawl resumes.
    let manifest = dir.path().join("state/index/crawldedup-manifest");
    std::fs::remove_file(&manifest).unwrap();
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(line(&lines, "index").contains("damaged"), "{lines:?}");
    let (code, lines) = state_command("repair", dir.path(), &["--accept-loss"]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        line(&lines, "index").contains("manifest rewritten"),
        "{lines:?}"
    );
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 0, "{lines:?}");
    let o = crawl_once(dir.path(), &seed);
    assert!(o.status.success(), "{}", stderr(&o));

    // An emptied crawl database: named by verify, not rebuilt by repair.
    std::fs::write(dir.path().join("state/crawl/db"), b"").unwrap();
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "crawl database").contains("damaged"),
        "{lines:?}"
    );
    let (code, lines) = state_command("repair", dir.path(), &["--accept-loss"]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "crawl database").contains("could not recover"),
        "{lines:?}"
    );
}

#[test]
fn a_damaged_url_journal_is_refused_named_by_verify_and_set_aside_by_repair() {
    use crawldedup::{Config, Dedup, UrlVerdict};
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    {
        let dedup = Dedup::open(&state, &Config::default()).unwrap();
        for i in 0..50 {
            let url = format!("http://journal.test/{i}");
            assert!(matches!(dedup.check_url(&url).unwrap(), UrlVerdict::New(_)));
        }
        dedup.sync_urls().unwrap();
        // Dropped without a checkpoint, as a kill would leave it: the journal holds the 50.
    }
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        line(&lines, "URL journal").contains("50 URLs in 1 generation"),
        "{lines:?}"
    );
    {
        let dedup = Dedup::open(&state, &Config::default()).unwrap();
        assert!(matches!(
            dedup.check_url("http://journal.test/7").unwrap(),
            UrlVerdict::Seen(_)
        ));
    }

    // One flipped byte in the middle of the journal: the stage refuses to open, naming the
    // file, rather than answering `new` for URLs it answered before.
    let journal = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("seen-urls.journal.")
        })
        .unwrap();
    let mut bytes = std::fs::read(&journal).unwrap();
    // The header (52 bytes), then 40-byte records.
    bytes[52 + 40 * 10 + 5] ^= 0x40;
    std::fs::write(&journal, &bytes).unwrap();
    let error = Dedup::open(&state, &Config::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("seen-urls.journal."), "{error}");
    assert!(error.contains("record 11"), "{error}");
    assert_eq!(error.lines().count(), 1);
    let (code, lines) = state_command("verify", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(line(&lines, "URL journal").contains("damaged"), "{lines:?}");
    let (code, lines) = state_command("repair", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "URL journal").contains("--accept-loss"),
        "{lines:?}"
    );
    assert!(journal.exists());
    let (code, lines) = state_command("repair", dir.path(), &["--accept-loss"]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(!journal.exists());
    assert_eq!(
        std::fs::read(format!("{}.damaged", journal.display())).unwrap(),
        bytes
    );
    let dedup = Dedup::open(&state, &Config::default()).unwrap();
    assert_eq!(dedup.stats().seen_urls, 0, "the set-aside URLs are gone");
}

#[test]
fn a_stage_filter_is_rebuilt_from_its_pages_only_when_loss_is_accepted() {
    use crawldedup::{Config, Dedup, PageVerdict, UrlVerdict};
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let site = crawldedup::fixture::Site::without_traps(4, 2);
    let page = |i: usize| match site.respond(&site.articles()[i].path()) {
        crawldedup::fixture::Reply::Full { body, .. } => body,
        _ => panic!("an article answers in full"),
    };
    {
        let dedup = Dedup::open(&state, &Config::default()).unwrap();
        for i in 0..5 {
            let url = format!("http://pages.test/{i}");
            assert!(matches!(dedup.check_url(&url).unwrap(), UrlVerdict::New(_)));
            let verdict = dedup.check_page(&url, &page(i), Some("text/html")).unwrap();
            assert!(matches!(verdict, PageVerdict::Unique { .. }), "{verdict:?}");
        }
        dedup.check_url("http://pages.test/never-fetched").unwrap();
        dedup.checkpoint().unwrap();
    }
    let bloom = state.join("seen-urls.bloom");
    let mut bytes = std::fs::read(&bloom).unwrap();
    let at = bytes.len() - 3;
    bytes[at] ^= 1;
    std::fs::write(&bloom, &bytes).unwrap();
    let (code, lines) = state_command("repair", dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        line(&lines, "URL filter").contains("--accept-loss"),
        "{lines:?}"
    );
    assert_eq!(std::fs::read(&bloom).unwrap(), bytes, "nothing changed");
    let (code, lines) = state_command("repair", dir.path(), &["--accept-loss"]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        line(&lines, "URL filter").contains("rebuilt from the 5 URLs of the pages in the index"),
        "{lines:?}"
    );
    let dedup = Dedup::open(&state, &Config::default()).unwrap();
    for i in 0..5 {
        let url = format!("http://pages.test/{i}");
        assert!(
            matches!(dedup.check_url(&url).unwrap(), UrlVerdict::Seen(_)),
            "{url}"
        );
    }
    // The one URL that never became a page is what --accept-loss gave up.
    assert!(matches!(
        dedup.check_url("http://pages.test/never-fetched").unwrap(),
        UrlVerdict::New(_)
    ));
}

/// A crawl whose files stop growing half way (the file-size limit of the process, which
/// makes every write past it fail as a full disk does) stops with exit code 1 and one line
/// naming the file, never with 2 (a configuration error) and never with a panic.
#[cfg(target_os = "linux")]
#[test]
fn a_crawl_that_cannot_write_stops_with_exit_code_1_in_one_line() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(crawldedup::fixture::serve(crawldedup::fixture::Site::new(
            2025, 40,
        )))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Past the state directory's first files, within the outputs' first megabyte.
    let limit: u64 = 1 << 20;
    let mut command = Command::new(env!("CARGO_BIN_EXE_crawldedup"));
    command.args([
        "crawl",
        "--seed",
        &server.url("/"),
        "--state-dir",
        dir.path().join("state").to_str().unwrap(),
        "--out",
        dir.path().join("out").to_str().unwrap(),
        "--set",
        "crawl.allow_private_ips=true",
        "--set",
        "crawl.per_host_delay_ms=0",
        "--set",
        "output.warc=true",
    ]);
    cli::limit_file_size(&mut command, limit);
    let o = command.output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains("File too large"), "{err}");
    // The cause once, not once per layer that carries it.
    assert_eq!(errors[0].matches("File too large").count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
