//! Running the built `crawldedup` binary and reading what it printed.

use std::process::{Command, Output};

pub fn crawldedup(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crawldedup"))
        .args(args)
        .output()
        .expect("the binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `crawldedup crawl --seed SEED --state-dir STATE --out OUT`, then `extra`.
pub fn crawl(seed: &str, state: &std::path::Path, out: &std::path::Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "crawl",
        "--seed",
        seed,
        "--state-dir",
        state.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    crawldedup(&args)
}

/// Runs the binary with `args`, `input` on its standard input.
pub fn with_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_crawldedup"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .expect("a pipe")
        .write_all(input)
        .expect("the input written");
    child.wait_with_output().expect("the binary ends")
}

/// Every file below `dir` with its bytes, sorted: what a refusal must leave as it was.
pub fn snapshot(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    for item in std::fs::read_dir(dir).unwrap() {
        let path = item.unwrap().path();
        if path.is_dir() {
            found.extend(snapshot(&path));
        } else {
            found.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    found.sort();
    found
}

/// Makes every write of `command`'s process past `bytes` in one file fail (EFBIG), as a
/// full disk makes it fail: the file-size limit, with SIGXFSZ ignored so that the write
/// returns the error instead of killing the process.
#[cfg(target_os = "linux")]
pub fn limit_file_size(command: &mut Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure only calls two async-signal-safe functions.
    unsafe {
        command.pre_exec(move || {
            let cap = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &cap) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
}

/// A read-only bind mount of `source`, undone when dropped.
pub struct ReadOnly(pub std::path::PathBuf);

impl ReadOnly {
    pub fn mount(source: &str, at: &std::path::Path) -> Option<ReadOnly> {
        std::fs::create_dir_all(at).unwrap();
        let mounted = |args: &[&str]| {
            std::process::Command::new("mount")
                .args(args)
                .output()
                .is_ok_and(|o| o.status.success())
        };
        let at_str = at.to_str().unwrap();
        if !mounted(&["--bind", source, at_str]) {
            return None;
        }
        let guard = ReadOnly(at.to_path_buf());
        mounted(&["-o", "remount,bind,ro", at_str]).then_some(guard)
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).output();
    }
}
