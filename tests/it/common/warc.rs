//! Reading the crawl's outputs back in tests: the WARC files and the JSONL files.

use std::io::Read;
use std::path::Path;

/// The JSON lines of `path` (none when it does not exist).
pub fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every WARC file under `out/warc`, in name order, decompressed (gzip member by member)
/// into one text.
pub fn warc_text(out: &Path) -> String {
    let mut names: Vec<_> = std::fs::read_dir(out.join("warc"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    names.sort();
    let mut text = Vec::new();
    for path in names {
        let bytes = std::fs::read(path).unwrap();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut text)
            .unwrap();
    }
    String::from_utf8_lossy(&text).into_owned()
}

/// The value of the header `name` (with its colon, "WARC-Type:") in a record's text,
/// trimmed; empty when the record has no such header.
pub fn field(record: &str, name: &str) -> String {
    record
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Runs the project's script `tests/SCRIPT` with `python` and `args`, `stdin` given to it;
/// its standard output, after checking that it succeeded.
pub fn run_script(python: &str, script: &str, args: &[&std::ffi::OsStr], stdin: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(script);
    let mut child = std::process::Command::new(python)
        .arg(path)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// The Python that has pywb, as CI names it (`CRAWLDEDUP_PYWB_PYTHON`); `None` (the caller's
/// replay check does not run) when it is not named, except in CI, which installs pywb.
pub fn pywb_python() -> Option<String> {
    let python = std::env::var("CRAWLDEDUP_PYWB_PYTHON").ok();
    if python.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CRAWLDEDUP_PYWB_PYTHON is not set (.ci/run installs pywb and sets it)"
        );
    }
    python
}

/// Each of `urls` replayed by pywb (`tests/pywb_replay.py`) from the WARC files and CDXJ
/// indexes in `dir`, as its HTTP status and the `sha1:` digest of its body; `None` when no
/// Python with pywb is named.
pub fn replay_with_pywb(
    dir: &Path,
    urls: &[String],
) -> Option<std::collections::HashMap<String, (u16, String)>> {
    let python = pywb_python()?;
    let root = tempfile::tempdir().unwrap();
    let pywb = root.path().join("pywb");
    let stdout = run_script(
        &python,
        "pywb_replay.py",
        &[pywb.as_os_str(), dir.as_os_str()],
        serde_json::to_string(urls).unwrap().as_bytes(),
    );
    let replayed: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&stdout).unwrap();
    Some(
        replayed
            .into_iter()
            .map(|(url, r)| {
                let status = r["status"].as_u64().unwrap() as u16;
                (url, (status, r["digest"].as_str().unwrap().to_string()))
            })
            .collect(),
    )
}

/// What `tests/warcio_check.py` reports of the WARC files in `dir`, when CI names a Python
/// that has warcio (`None` otherwise, except in CI, where that fails); it fails on a record warcio cannot read, and so does
/// warcio's own `check` (every record's digests), run on every file too.
pub fn warcio_report(dir: &Path) -> Option<serde_json::Value> {
    let Ok(python) = std::env::var("CRAWLDEDUP_WARCIO_PYTHON") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CRAWLDEDUP_WARCIO_PYTHON is not set (.ci/run installs warcio and sets it)"
        );
        return None;
    };
    let stdout = run_script(&python, "warcio_check.py", &[dir.as_os_str()], b"");
    let report = serde_json::from_slice(&stdout).unwrap();
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    let o = std::process::Command::new(Path::new(&python).with_file_name("warcio"))
        .args(["check", "-v"])
        .args(&files)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "warcio check: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    Some(report)
}
