//! The small commands (canonicalize, bloom-params, index-plan), configuration errors, help,
//! the documentation of every command and JSON field, and a state directory of an older
//! index format resumed.

use super::*;

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

/// Without arguments (or with `-`), `canonicalize` reads one URL a line from stdin, as
/// `extract` and `simhash` read their input, with one output line per input line.
#[test]
fn canonicalize_reads_stdin_one_url_a_line() {
    for args in [vec!["canonicalize"], vec!["canonicalize", "-"]] {
        let input = b"HTTP://Example.com:80/a?b=1&a=2\r\n::bad::\n\nhttp://h.com/?utm_source=x";
        let o = cli::with_stdin(&args, input);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let lines: Vec<_> = stdout(&o).lines().map(str::to_string).collect();
        assert_eq!(lines.len(), 4, "{args:?}: {lines:?}");
        assert_eq!(lines[0], "http://example.com/a?a=2&b=1");
        assert!(lines[1].starts_with("error: "), "{}", lines[1]);
        assert!(lines[2].starts_with("error: "), "{}", lines[2]);
        assert_eq!(lines[3], "http://h.com/");
    }
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

    // `config` refuses what `crawl` would, cluster on or not.
    for set in [
        "cluster.weight=0",
        "cluster.name=a b",
        "cluster.heartbeat_ttl_ms=10",
    ] {
        let o = crawldedup(&["config", "--set", set]);
        assert_eq!(o.status.code(), Some(2), "{set}: {}", stdout(&o));
        let key = set.split('=').next().unwrap();
        assert!(stderr(&o).contains(key), "{set}: {}", stderr(&o));
    }
}

/// html5ever reports parse errors of ordinary pages (foster parenting of text inside a
/// table) as warnings through `log`: none reaches the user's stderr by default.
#[test]
fn the_parser_s_own_warnings_stay_off_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("table.html");
    let rows: String = (0..20)
        .map(|i| format!("<table>stray text {i}<tr><td>cell {i}</td></tr></table>"))
        .collect();
    std::fs::write(
        &page,
        format!(
            "<html><body><article><p>A story long enough to be the page's main text, about \
             tables and the text that lands in the wrong place inside them.</p>{rows}\
             </article></body></html>"
        ),
    )
    .unwrap();
    let page = page.to_str().unwrap();
    for args in [
        vec!["extract", page],
        vec![
            "dedup",
            "--state-dir",
            dir.path().join("s").to_str().unwrap(),
            page,
        ],
    ] {
        let o = crawldedup(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
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

/// The long options a subcommand's `--help` lists, but the global ones.
fn options_in_help(sub: &str) -> std::collections::BTreeSet<String> {
    let o = crawldedup(&[sub, "--help"]);
    let help = stdout(&o);
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l
                .strip_prefix('-')
                .filter(|r| !r.starts_with('-'))
                .map_or(l, |r| r.split_once(", ").map_or(l, |(_, rest)| rest));
            let name = l.strip_prefix("--")?;
            let name: String = name
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                .collect();
            (!["help", "verbose", "quiet", "version"].contains(&name.as_str()))
                .then(|| format!("--{name}"))
        })
        .collect()
}

/// Every option of every subcommand is in its synopsis in docs/commands.md, and the
/// synopsis names no option the command lacks.
#[test]
fn every_command_s_help_matches_its_synopsis_in_the_commands_page() {
    let commands = repository_file("docs/commands.md");
    let option = regex::Regex::new(r"--[a-z][a-z-]*").unwrap();
    for sub in subcommands() {
        let prefix = format!("| `crawldedup {sub}");
        let row = commands
            .lines()
            .find(|l| {
                l.strip_prefix(&prefix)
                    .is_some_and(|rest| rest.starts_with([' ', '`']))
            })
            .unwrap_or_else(|| panic!("docs/commands.md: no row for `crawldedup {sub}`"));
        let synopsis = row.split('`').nth(1).unwrap();
        let documented: std::collections::BTreeSet<String> = option
            .find_iter(synopsis)
            .map(|m| m.as_str().to_string())
            .collect();
        let helped = options_in_help(&sub);
        assert_eq!(
            documented, helped,
            "`crawldedup {sub}`: docs/commands.md's synopsis against --help"
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

/// Copies the fixture state directory `name` (under `tests/fixtures`) to `to`.
fn copy_fixture_state(name: &str, to: &std::path::Path) {
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let mut dirs = vec![from.clone()];
    while let Some(dir) = dirs.pop() {
        let target = to.join(dir.strip_prefix(&from).unwrap());
        std::fs::create_dir_all(&target).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                std::fs::copy(&path, target.join(path.file_name().unwrap())).unwrap();
            }
        }
    }
}

/// `tests/fixtures/index-format-6` is the state directory that the last build of index
/// format 6 left after `crawldedup dedup` of ten fixture pages (run in the pages' folder,
/// so each record's name is the file's name). This build resumes it: each page is found
/// again as the record it was stored as, new pages go in after them, and the index is
/// upgraded to the current format.
#[test]
fn a_state_directory_of_index_format_6_resumes_with_every_page_and_is_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    copy_fixture_state("index-format-6", &state);
    let manifest = state.join("index/crawldedup-manifest");
    assert!(
        std::fs::read_to_string(&manifest)
            .unwrap()
            .contains("\nformat 6\n")
    );
    let stored = [
        "article",
        "blog-comments",
        "collection",
        "documentation",
        "forum-long-first-post",
        "forum",
        "listing",
        "news-comments",
        "news-megamenu",
        "product",
    ];
    let pages: Vec<String> = stored
        .iter()
        .chain(&["news-rails", "service"])
        .map(|p| fixture(p))
        .collect();
    let run = || {
        let mut args = vec!["dedup", "--json", "--state-dir", state.to_str().unwrap()];
        args.extend(pages.iter().map(String::as_str));
        let o = crawldedup(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let verdicts = stdout(&o)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .collect::<Vec<_>>();
        (verdicts, stderr(&o))
    };
    let (verdicts, log) = run();
    assert_eq!(verdicts.len(), 12);
    // Its fingerprints are of version 4, upgraded with a warning (Korean is read another
    // way since; none of these pages is Korean).
    assert!(log.contains("fingerprint version 4 upgraded to 5"), "{log}");
    for (page, verdict) in stored.iter().zip(&verdicts) {
        assert_eq!(verdict["verdict"], "exact_duplicate", "{verdict}");
        // The name read back from the record format 6 wrote whole.
        assert_eq!(verdict["of"], format!("{page}.html"), "{verdict}");
    }
    for (verdict, id) in verdicts[10..].iter().zip([10, 11]) {
        assert_eq!(verdict["verdict"], "unique", "{verdict}");
        assert_eq!(verdict["id"], id, "{verdict}");
    }
    let upgraded = format!(
        "\nformat {}\nfingerprint {}\n",
        crawldedup::index::INDEX_FORMAT_VERSION,
        crawldedup::fingerprint::FINGERPRINT_VERSION
    );
    assert!(
        std::fs::read_to_string(&manifest)
            .unwrap()
            .contains(&upgraded)
    );
    // Resumed again: all twelve found, the two new ones under the names given this time,
    // and no second warning.
    let (again, log) = run();
    assert!(!log.contains("upgraded"), "{log}");
    for (verdict, page) in again.iter().zip(&pages) {
        assert_eq!(verdict["verdict"], "exact_duplicate", "{verdict}");
        let of = verdict["of"].as_str().unwrap();
        assert!(page.ends_with(of), "{page}: {verdict}");
    }
}
