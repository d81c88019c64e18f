//! The `crawldedup` command line: parses arguments, calls the library, prints.

mod args;
mod commands;
mod dedup;
mod input;
mod print;
mod report;
mod revisits;
mod warc_out;

use std::io;
use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command, EXIT_CONFIG};
use commands::{
    bloom_params, canonicalize, cluster_stats, crawl, extract, fixture_site, index_plan, reconcile,
    serve, simhash, state_command,
};
use dedup::dedup;
use print::{print_summary, run_demo};

/// mimalloc is the binary's allocator: on the crawl benchmark a page costs less CPU than
/// with glibc's malloc (docs/benchmarks.md, the crawl table). The library sets none.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc tuned as the binary loads, before Rust's runtime allocates: it reserves its first
/// arena at the first allocation, with the options it has then.
#[cfg(all(feature = "mimalloc", target_os = "linux"))]
#[used]
#[unsafe(link_section = ".init_array")]
static TUNE_MIMALLOC: extern "C" fn() = {
    extern "C" fn tune() {
        crawldedup::crawl::tune_mimalloc();
    }
    tune
};

fn main() -> ExitCode {
    #[cfg(all(feature = "mimalloc", not(target_os = "linux")))]
    crawldedup::crawl::tune_mimalloc();
    // What C code linked in (zstd) still allocates from glibc.
    crawldedup::crawl::limit_malloc_arenas();
    let cli = Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    match run(cli.command) {
        Ok(code) => code,
        Err(Failure::Config(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_CONFIG)
        }
        Err(Failure::Setup(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_CONFIG)
        }
        // The reader went away (`crawldedup extract ... | head`): nothing is wrong, and
        // nothing more needs to be written.
        Err(Failure::Other(e)) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(Failure::Other(e)) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes in one line, each cause once: an error whose message already
/// ends with its cause (`output FILE: CAUSE`) does not get it a second time.
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !line.ends_with(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
    }
    line
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

enum Failure {
    Config(crawldedup::ConfigError),
    /// A problem with what the command was given (a seed, a seed file, a state directory).
    Setup(String),
    Other(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for Failure {
    fn from(e: E) -> Self {
        let e = e.into();
        match e.downcast::<crawldedup::ConfigError>() {
            Ok(config) => Failure::Config(config),
            Err(other) => Failure::Other(other),
        }
    }
}

fn init_logging(verbose: u8, quiet: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "info",
        (false, 1) => "debug",
        (false, _) => "trace",
    };
    // sled logs its own view of a damaged database (`failed to properly initialize
    // segments`) before the error that crawldedup turns into one line, and html5ever its
    // parse errors of ordinary pages (`foster parenting not implemented`), dozens a crawl,
    // none of them the user's to act on: both off unless RUST_LOG asks for them.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!("{default},sled=off,html5ever=off"))
    });
    // Colours only for a person at a terminal, never into a log file or a pipe.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(io::IsTerminal::is_terminal(&io::stderr()))
        .with_writer(io::stderr)
        .with_target(false)
        .init();
}

fn run(command: Command) -> Result<ExitCode, Failure> {
    match command {
        Command::Demo => run_demo(),
        Command::Canonicalize(args) => canonicalize(args),
        Command::BloomParams(args) => bloom_params(args),
        Command::IndexPlan(args) => index_plan(args),
        Command::Extract(args) => extract(args),
        Command::Simhash(args) => simhash(args),
        Command::Dedup(args) => dedup(args),
        Command::Crawl(args) => crawl(args),
        Command::Serve(args) => serve(args),
        Command::Verify(args) => state_command(&args, None),
        Command::Repair(args) => state_command(&args.state, Some(&args)),
        Command::Reconcile(args) => reconcile(&args),
        Command::FixtureSite(args) => fixture_site(&args),
        Command::Report(args) => report::report(args),
        Command::Stats(args) if !args.cluster.is_empty() => cluster_stats(&args),
        Command::Stats(args) => {
            let state_dir = args.state_dir.clone().unwrap_or_default();
            let summary =
                crawldedup::crawl::stats(&state_dir).map_err(|e| Failure::Setup(e.to_string()))?;
            if args.json {
                println!("{}", serde_json::to_string(&summary)?);
            } else {
                print_summary(&summary);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Config(args) => {
            print!("{}", args.load()?.to_toml());
            Ok(ExitCode::SUCCESS)
        }
    }
}
