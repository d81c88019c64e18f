//! The command line's contracts: one output line per input, exit codes, one-line errors.

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
    ] {
        let o = crawldedup(&[sub, "--help"]);
        assert!(o.status.success(), "{sub}");
        assert!(stdout(&o).contains("Usage"), "{sub}");
    }
}

#[test]
fn demo_runs_offline() {
    let o = crawldedup(&["demo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("24 links: 7 to fetch, 13 dropped"),
        "{}",
        stdout(&o)
    );
}
