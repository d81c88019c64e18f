//! The command line's contracts: one output line per input, exit codes, one-line errors.

use std::process::{Command, Output};

use crate::run_cli as cli;
use cli::{crawldedup, stderr, stdout};

mod before_checkpoint;
mod commands;
mod damage;
mod pages;

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/pages/{name}.html",
        env!("CARGO_MANIFEST_DIR")
    )
}
