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
