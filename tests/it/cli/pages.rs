//! The page commands: extract, simhash and dedup, on files, stdin and gzip.

use super::*;

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
