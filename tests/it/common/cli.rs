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
