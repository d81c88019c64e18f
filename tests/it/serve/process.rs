//! The sidecar as a process: signals, unusable addresses and state folders, restarts after
//! SIGKILL, time windows from the settings, and a full disk.

use super::*;

/// Runs `crawldedup serve` on a free port and returns the process and its base URL.
fn spawn_binary(state: &std::path::Path, extra: &[&str]) -> (KillOnDrop, String) {
    spawn_binary_with(state, extra, |_| {})
}

/// As [`spawn_binary`], with `prepare` applied to the command before it starts.
fn spawn_binary_with(
    state: &std::path::Path,
    extra: &[&str],
    prepare: impl FnOnce(&mut Command),
) -> (KillOnDrop, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_crawldedup"));
    command
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--checkpoint-every",
            "0",
        ])
        .arg("--state-dir")
        .arg(state)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    prepare(&mut command);
    let mut child = command.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .to_string();
    (KillOnDrop(child), base)
}

fn signal(child: &KillOnDrop, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn sigterm_and_sigint_stop_the_binary_with_a_checkpoint() {
    let site = Site::new(3, 2);
    let state = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = reqwest::Client::new();
    let post = |base: &str, path: &str, body: Value| {
        runtime.block_on(answer(client.post(format!("{base}{path}")).json(&body)))
    };
    let articles: Vec<_> = site.articles().iter().map(|a| a.path()).collect();

    // First run: two pages and a URL, then SIGTERM. No periodic checkpoint runs, so only
    // the one at shutdown can save them.
    let (mut child, base) = spawn_binary(state.path(), &[]);
    for path in &articles[..2] {
        let (_, got) = post(
            &base,
            "/v1/pages/check",
            page_request(path, &page(&site, path)),
        );
        assert_eq!(got["verdict"], "unique");
    }
    let (_, got) = post(
        &base,
        "/v1/urls/check",
        json!({"urls": ["http://a.test/x"]}),
    );
    assert_eq!(got["results"][0]["verdict"], "new");
    signal(&child, "TERM");
    let status = child.0.wait().unwrap();
    assert!(status.success(), "{status}");

    // Second run resumes them; SIGINT stops it the same way.
    let (mut child, base) = spawn_binary(state.path(), &[]);
    let (_, got) = post(
        &base,
        "/v1/pages/check",
        page_request("http://again.test/", &page(&site, &articles[1])),
    );
    assert_eq!(got["verdict"], "exact_duplicate", "{got}");
    assert_eq!(
        got["of"],
        format!("http://site.test{}", articles[1]).as_str()
    );
    let (_, got) = post(
        &base,
        "/v1/urls/check",
        json!({"urls": ["http://a.test/x"]}),
    );
    assert_eq!(got["results"][0]["verdict"], "seen");
    let path = &articles[2];
    let (_, got) = post(
        &base,
        "/v1/pages/check",
        page_request(path, &page(&site, path)),
    );
    assert_eq!(got["verdict"], "unique");
    signal(&child, "INT");
    assert!(child.0.wait().unwrap().success());

    let (mut child, base) = spawn_binary(state.path(), &[]);
    let (_, got) = post(
        &base,
        "/v1/pages/check",
        page_request("http://third.test/", &page(&site, path)),
    );
    assert_eq!(got["verdict"], "exact_duplicate", "{got}");
    signal(&child, "TERM");
    assert!(child.0.wait().unwrap().success());
}

#[test]
fn unusable_listen_address_or_state_dir_is_one_line_and_exit_2() {
    let state = tempfile::tempdir().unwrap();
    let blocker = state.path().join("file");
    std::fs::write(&blocker, b"not a directory").unwrap();
    let ok = state.path().join("ok");
    // (arguments, state directory, what the one line says)
    for (args, dir, says) in [
        (vec!["--listen", "localhost-ish"], ok.clone(), "--listen"),
        (
            vec!["--listen", "127.0.0.1:0"],
            blocker.join("state"),
            "state",
        ),
        (
            vec!["--listen", "127.0.0.1:0"],
            blocker.clone(),
            "not a directory",
        ),
        (
            vec!["--listen", "127.0.0.1:0", "--token", ""],
            ok.clone(),
            "--token (or CRAWLDEDUP_TOKEN) is empty",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_crawldedup"))
            .arg("serve")
            .args(&args)
            .arg("--state-dir")
            .arg(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// Page checks from 8 concurrent clients, each sending the site's articles in its own
/// order, until a SIGKILL `kill_after` into the burst: the (path, verdict) of every answer
/// received, with the clients' errors after the kill ignored.
fn burst_until_killed(
    runtime: &tokio::runtime::Runtime,
    site: &Site,
    state: &std::path::Path,
    extra: &[&str],
    kill_after: std::time::Duration,
) -> Vec<(String, String)> {
    let (mut child, base) = spawn_binary(state, extra);
    let articles: Vec<String> = site.articles().iter().map(|a| a.path()).collect();
    let answered = Arc::new(std::sync::Mutex::new(Vec::new()));
    runtime.block_on(async {
        let client = reqwest::Client::new();
        let mut tasks = Vec::new();
        for c in 0..8usize {
            let (client, base, answered) = (client.clone(), base.clone(), answered.clone());
            let mut order = articles.clone();
            let turn = c * order.len() / 8;
            order.rotate_left(turn);
            let bodies: Vec<(String, String)> = order
                .into_iter()
                .map(|p| {
                    let body = page(site, &p);
                    (p, body)
                })
                .collect();
            tasks.push(tokio::spawn(async move {
                for (path, body) in bodies {
                    let sent = client
                        .post(format!("{base}/v1/pages/check"))
                        .json(&page_request(&path, &body))
                        .send()
                        .await;
                    let Ok(response) = sent else { return };
                    let Ok(got) = response.json::<Value>().await else {
                        return;
                    };
                    let verdict = got["verdict"].as_str().unwrap_or("").to_string();
                    answered.lock().unwrap().push((path, verdict));
                }
            }));
        }
        kill_during(&mut child, tasks, kill_after).await;
    });
    std::mem::take(&mut *answered.lock().unwrap())
}

/// With `--durability checkpoint` (and no periodic checkpoint) the same test fails: pages
/// answered `unique` come back `unique` after the restart.
#[test]
fn every_page_answered_unique_before_a_sigkill_is_a_duplicate_after_the_restart() {
    let site = Site::new(5, 20);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut unique_answered = 0;
    // Kill at several moments of the burst, resuming each time from the same directory.
    for kill_after in [150u64, 400, 900] {
        let answered = burst_until_killed(
            &runtime,
            &site,
            state.path(),
            &[],
            std::time::Duration::from_millis(kill_after),
        );
        let unique: Vec<&String> = answered
            .iter()
            .filter(|(_, v)| v == "unique")
            .map(|(p, _)| p)
            .collect();
        unique_answered += unique.len();
        // Every page answered `unique` is known after the restart.
        let (mut child, base) = spawn_binary(state.path(), &[]);
        let client = reqwest::Client::new();
        for path in unique {
            let (_, got) = runtime.block_on(answer(
                client
                    .post(format!("{base}/v1/pages/check"))
                    .json(&page_request("http://again.test/", &page(&site, path))),
            ));
            assert_eq!(
                got["verdict"], "exact_duplicate",
                "{path}, answered unique before the kill at {kill_after} ms: {got}"
            );
        }
        signal(&child, "KILL");
        let _ = child.0.wait();
    }
    assert!(
        unique_answered > 0,
        "the burst was answered before the kills"
    );
}

#[test]
fn a_state_directory_held_by_a_running_server_is_refused_in_one_line() {
    let state = tempfile::tempdir().unwrap();
    let (mut child, _base) = spawn_binary(state.path(), &[]);
    let page = format!(
        "{}/tests/fixtures/pages/article.html",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = Command::new(env!("CARGO_BIN_EXE_crawldedup"))
        .args(["dedup", "--share-state", "--state-dir"])
        .arg(state.path())
        .arg(&page)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("another process holds this state directory"),
        "{err}"
    );
    signal(&child, "TERM");
    assert!(child.0.wait().unwrap().success());
}

/// Lets the clients run for `kill_after`, kills the server with SIGKILL, then waits for the
/// clients (their errors after the kill are theirs to ignore) and for the server to go.
async fn kill_during(
    child: &mut KillOnDrop,
    clients: Vec<tokio::task::JoinHandle<()>>,
    kill_after: std::time::Duration,
) {
    tokio::time::sleep(kill_after).await;
    signal(child, "KILL");
    for client in clients {
        let _ = client.await;
    }
    let _ = child.0.wait();
}

/// URL checks from 8 concurrent clients, batches of 25 URLs never sent before, until a
/// SIGKILL `kill_after` into the burst: every URL answered, with its verdict.
fn url_burst_until_killed(
    runtime: &tokio::runtime::Runtime,
    state: &std::path::Path,
    extra: &[&str],
    round: u64,
    kill_after: std::time::Duration,
) -> Vec<(String, String)> {
    let (mut child, base) = spawn_binary(state, extra);
    let answered = Arc::new(std::sync::Mutex::new(Vec::new()));
    runtime.block_on(async {
        let client = reqwest::Client::new();
        let mut tasks = Vec::new();
        for c in 0..8u64 {
            let (client, base, answered) = (client.clone(), base.clone(), answered.clone());
            tasks.push(tokio::spawn(async move {
                for batch in 0.. {
                    let urls: Vec<String> = (0..25)
                        .map(|i| format!("http://r{round}.test/c{c}/b{batch}/u{i}"))
                        .collect();
                    let sent = client
                        .post(format!("{base}/v1/urls/check"))
                        .json(&json!({ "urls": urls }))
                        .send()
                        .await;
                    let Ok(response) = sent else { return };
                    let Ok(got) = response.json::<Value>().await else {
                        return;
                    };
                    let mut answered = answered.lock().unwrap();
                    for result in got["results"].as_array().into_iter().flatten() {
                        answered.push((
                            result["url"].as_str().unwrap_or("").to_string(),
                            result["verdict"].as_str().unwrap_or("").to_string(),
                        ));
                    }
                }
            }));
        }
        kill_during(&mut child, tasks, kill_after).await;
    });
    std::mem::take(&mut *answered.lock().unwrap())
}

/// The URLs of `answered` that a restarted server (same state directory) calls `new`.
fn forgotten_after_restart(
    runtime: &tokio::runtime::Runtime,
    state: &std::path::Path,
    answered: &[(String, String)],
) -> Vec<String> {
    let (mut child, base) = spawn_binary(state, &[]);
    let client = reqwest::Client::new();
    let mut forgotten = Vec::new();
    for chunk in answered.chunks(1000) {
        let urls: Vec<&str> = chunk.iter().map(|(u, _)| u.as_str()).collect();
        let (status, got) = runtime.block_on(answer(
            client
                .post(format!("{base}/v1/urls/check"))
                .json(&json!({ "urls": urls })),
        ));
        assert_eq!(status, 200, "{got}");
        for result in got["results"].as_array().unwrap() {
            if result["verdict"] != "seen" {
                forgotten.push(result["url"].as_str().unwrap().to_string());
            }
        }
    }
    signal(&child, "KILL");
    let _ = child.0.wait();
    forgotten
}

#[test]
fn every_url_answered_new_before_a_sigkill_is_seen_after_the_restart() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut new_answered = 0;
    // Kill at several moments, resuming each time from the same directory; a checkpoint
    // in between (a clean stop) moves the journal to a new generation.
    for (round, kill_after) in [(0u64, 150u64), (1, 400), (2, 900)] {
        let answered = url_burst_until_killed(
            &runtime,
            state.path(),
            &[],
            round,
            std::time::Duration::from_millis(kill_after),
        );
        let new: Vec<(String, String)> = answered.into_iter().filter(|(_, v)| v == "new").collect();
        new_answered += new.len();
        let forgotten = forgotten_after_restart(&runtime, state.path(), &new);
        assert!(
            forgotten.is_empty(),
            "{} of {} URLs answered new before the kill at {kill_after} ms came back new, \
             first {}",
            forgotten.len(),
            new.len(),
            forgotten[0]
        );
        if round == 1 {
            let (child, base) = spawn_binary(state.path(), &[]);
            let (status, _) = runtime.block_on(answer(
                reqwest::Client::new().post(format!("{base}/v1/checkpoint")),
            ));
            assert_eq!(status, 200);
            signal(&child, "KILL");
        }
    }
    assert!(new_answered > 0, "the burst was answered before the kills");

    // The contrast: answering before the URLs are durable forgets them.
    let answered = url_burst_until_killed(
        &runtime,
        state.path(),
        &["--durability", "checkpoint"],
        3,
        std::time::Duration::from_millis(400),
    );
    let new: Vec<(String, String)> = answered.into_iter().filter(|(_, v)| v == "new").collect();
    assert!(!new.is_empty());
    assert!(
        !forgotten_after_restart(&runtime, state.path(), &new).is_empty(),
        "with --durability checkpoint a kill forgets recent URLs"
    );
}

#[test]
fn the_sidecar_takes_the_time_windows_from_its_settings_and_reports_them() {
    let state = tempfile::tempdir().unwrap();
    let (mut child, base) = spawn_binary(
        state.path(),
        &[
            "--set",
            "dedup.retention=48h",
            "--set",
            "url_filter.recrawl_after=30d",
        ],
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = reqwest::Client::new();
    let (_, got) = runtime.block_on(answer(
        client
            .post(format!("{base}/v1/urls/check"))
            .json(&json!({"urls": ["http://a.test/x"]})),
    ));
    assert_eq!(got["results"][0]["verdict"], "new");
    let (_, stats) = runtime.block_on(answer(client.get(format!("{base}/v1/stats"))));
    assert_eq!(stats["retention_secs"], 48 * 3600, "{stats}");
    assert_eq!(stats["recrawl_after_secs"], 30 * 24 * 3600, "{stats}");
    assert_eq!(stats["url_generations"], 1, "{stats}");
    assert_eq!(stats["fingerprints_expired"], 0, "{stats}");
    signal(&child, "TERM");
    assert!(child.0.wait().unwrap().success());

    // A typo in a window is one line naming the key, exit code 2.
    let out = Command::new(env!("CARGO_BIN_EXE_crawldedup"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--set",
            "dedup.retention=48 hourz",
        ])
        .arg("--state-dir")
        .arg(state.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("dedup.retention"), "{err}");
}

/// A server whose files stop growing (the process's file-size limit, which fails every
/// write past it as a full disk does) answers each check it cannot record with a 500 and
/// one line naming the file, stays up, and stops with exit code 1; every page it answered
/// `unique` before is a duplicate after a restart on the same directory.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_a_500_naming_the_file_and_loses_nothing_answered() {
    let site = Site::new(11, 200);
    let state = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // Past the state directory's first files, within the index's first megabyte.
    let (child, base) = spawn_binary_with(state.path(), &[], |command| {
        crate::run_cli::limit_file_size(command, 1 << 20);
    });
    let client = reqwest::Client::new();
    let mut unique: Vec<String> = Vec::new();
    let mut failure = None;
    for article in site.articles() {
        let path = article.path();
        let (status, got) =
            runtime.block_on(answer(client.post(format!("{base}/v1/pages/check")).json(
                &page_request(&format!("http://full.test{path}"), &page(&site, &path)),
            )));
        if status != 200 {
            failure = Some((status, got));
            break;
        }
        if got["verdict"] == "unique" {
            unique.push(path);
        }
    }
    let (status, got) = failure.expect("the writes reached the limit");
    assert_eq!(status, 500, "{got}");
    let error = got["error"].as_str().unwrap();
    assert!(
        error.contains("index") && error.contains("File too large (os error 27)"),
        "{got}"
    );
    assert_eq!(error.lines().count(), 1, "{got}");
    assert!(!unique.is_empty(), "pages were answered before the limit");
    // The server is still up.
    let (status, _) = runtime.block_on(answer(client.get(format!("{base}/healthz"))));
    assert_eq!(status, 200);
    // Stopping checkpoints, which cannot write: exit code 1 and one line, no panic.
    signal(&child, "TERM");
    let mut child = child;
    let stopped = child.0.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.0.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(stopped.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Every page answered `unique` is known after a restart without the limit.
    let (mut again, base) = spawn_binary(state.path(), &[]);
    for path in &unique {
        let (_, got) = runtime.block_on(answer(
            client
                .post(format!("{base}/v1/pages/check"))
                .json(&page_request("http://again.test/", &page(&site, path))),
        ));
        assert_eq!(got["verdict"], "exact_duplicate", "{path}: {got}");
    }
    signal(&again, "TERM");
    assert!(again.0.wait().unwrap().success());
}
