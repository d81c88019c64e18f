//! The `crawldedup` command line: parses arguments, calls the library, prints.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use crawldedup::demo::{self, LinkOutcome};
use crawldedup::{BloomParams, Canonicalizer, Config, SeenConfig};

/// Keeps web crawls free of repeats: canonical URLs, a tuned Bloom filter, boilerplate
/// removal and a persistent simhash index.
#[derive(Parser)]
#[command(name = "crawldedup", version, about, long_about = None)]
struct Cli {
    /// More log output (-v: debug, -vv: trace). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Only errors in the log.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs the bundled demonstration, offline.
    Demo,
    /// Prints the canonical form of each URL, one line per input, in order
    /// (`error: <reason>` for a bad one; exit code 1 if any was bad).
    Canonicalize(CanonicalizeArgs),
    /// Prints the Bloom filter size for n expected URLs at false-positive rate p.
    BloomParams(BloomParamsArgs),
    /// Checks a configuration file and prints it with every default filled in.
    Config(ConfigArgs),
    /// Prints the simhash index layouts considered for n fingerprints at distance k.
    IndexPlan(IndexPlanArgs),
    /// Prints the main content of HTML files (or stdin): the text, or one JSON line per input.
    Extract(ExtractArgs),
    /// Prints the 64-bit simhash of each input's main text as 16 hex digits.
    Simhash(SimhashArgs),
    /// Runs HTML files, in the order given, through the page stage and prints each verdict.
    Dedup(DedupArgs),
    /// Crawls from the seeds: fetches, deduplicates, stores unique pages; resumes from the
    /// state directory; Ctrl-C stops with a checkpoint.
    Crawl(CrawlArgs),
    /// Prints the figures of a crawl on disk (as of its last checkpoint).
    Stats(StatsArgs),
    /// Checks every part of a state directory (crawl database, frontier, URL filter, URL
    /// journal, index, and a crawl's outputs against its last checkpoint): one line per
    /// part, fine or what is wrong; exit code 1 if anything is wrong.
    Verify(StateArgs),
    /// Mends a state directory from what is intact (outputs past the checkpoint cut back; a
    /// crawl's damaged URL filter rebuilt from its frontier; with --accept-loss, other URL
    /// filters rebuilt from the stored pages, damaged journal generations set aside and the
    /// index's manifest rewritten for what its database holds) and says what it could not;
    /// never deletes data.
    Repair(RepairArgs),
    /// Serves the page stage over HTTP/JSON for crawlers in any language (a sidecar);
    /// SIGINT or SIGTERM stops it with a checkpoint.
    Serve(ServeArgs),
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on; loopback unless told otherwise. Port 0 picks a free port.
    #[arg(long, value_name = "ADDR", default_value = crawldedup::adapters::serve::DEFAULT_LISTEN)]
    listen: String,
    /// Where the URL filter and index live; resumed when it holds earlier state.
    #[arg(long, value_name = "DIR")]
    state_dir: PathBuf,
    /// Require `Authorization: Bearer <token>` on every route but /healthz. Read from the
    /// environment variable CRAWLDEDUP_TOKEN when not given here.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "CRAWLDEDUP_TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,
    /// Largest request body in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crawldedup::adapters::serve::DEFAULT_MAX_REQUEST_BYTES)]
    max_request_bytes: usize,
    /// Checkpoint this often (for example 30s, 5m; 0 turns it off).
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    checkpoint_every: humantime::Duration,
    /// When a stored page is durable: `answered` (before its answer goes out; a kill -9
    /// loses nothing that was answered) or `checkpoint` (at the next checkpoint; faster, a
    /// kill -9 forgets the pages stored since).
    #[arg(long, value_name = "WHEN", default_value = "answered")]
    durability: crawldedup::adapters::serve::Durability,
    #[command(flatten)]
    config: ConfigArgs,
}

#[derive(Args)]
struct StateArgs {
    /// The state directory (of a crawl, `serve` or `dedup`).
    #[arg(long, value_name = "DIR")]
    state_dir: PathBuf,
    /// A crawl's output directory, checked against its last checkpoint.
    #[arg(long = "out", value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

#[derive(Args)]
struct RepairArgs {
    #[command(flatten)]
    state: StateArgs,
    /// Accept losing what cannot be recovered: outside a crawl, rebuild a damaged URL filter
    /// from the stored pages alone (URLs answered `new` that never became pages are
    /// forgotten); set a damaged URL journal generation aside; accept the documents a
    /// damaged index still holds.
    #[arg(long)]
    accept_loss: bool,
    /// Sizes a rebuilt URL filter (`[url_filter]`, as for a new state directory).
    #[command(flatten)]
    config: ConfigArgs,
}

#[derive(Args)]
struct StatsArgs {
    /// The crawl's state directory.
    #[arg(long, value_name = "DIR")]
    state_dir: PathBuf,
    /// As one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct CrawlArgs {
    #[command(flatten)]
    config: ConfigArgs,
    /// A start URL (repeatable; added to crawl.seeds).
    #[arg(long = "seed", value_name = "URL")]
    seeds: Vec<String>,
    /// A file of start URLs (repeatable; added to crawl.seed_files).
    #[arg(long = "seeds", value_name = "FILE")]
    seed_files: Vec<PathBuf>,
    /// crawl.state_dir
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// crawl.out_dir
    #[arg(long = "out", value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// crawl.max_pages: stop once this many pages are fetched, counting every run of this
    /// crawl (a resumed crawl counts what earlier runs fetched)
    #[arg(long)]
    max_pages: Option<u64>,
    /// crawl.allow_private_ips = true
    #[arg(long)]
    allow_private_ips: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ExtractArgs {
    /// HTML files (read as raw bytes); stdin when none or `-`.
    files: Vec<PathBuf>,
    /// One line per input: {"file","title","text"}.
    #[arg(long)]
    json: bool,
    /// The page's URL, to resolve its links and help guess its charset.
    #[arg(long)]
    url: Option<String>,
}

#[derive(Args)]
struct SimhashArgs {
    /// Input files; stdin when none or `-`.
    files: Vec<PathBuf>,
    /// The inputs are plain main text, not HTML.
    #[arg(long)]
    text: bool,
}

#[derive(Args)]
struct DedupArgs {
    /// HTML files, decided in this order.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Keep the index (and URL filter) here, and resume from it; a temporary directory
    /// otherwise.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// One JSON line per file: {"file","verdict"[,"of","distance"]}.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    config: ConfigArgs,
}

#[derive(Args)]
struct IndexPlanArgs {
    /// Expected number of fingerprints.
    #[arg(long)]
    n: u64,
    /// Largest Hamming distance called a near-duplicate.
    #[arg(long, default_value_t = 3)]
    k: u32,
    /// Budget of expected candidates per query.
    #[arg(long, default_value_t = crawldedup::index::plan::DEFAULT_CANDIDATE_BUDGET)]
    budget: f64,
}

#[derive(Args)]
struct CanonicalizeArgs {
    /// URLs to canonicalize.
    #[arg(required = true)]
    urls: Vec<String>,
    /// Resolve the URLs as links found on this page.
    #[arg(long)]
    base: Option<String>,
    #[command(flatten)]
    config: ConfigArgs,
}

#[derive(Args)]
struct BloomParamsArgs {
    /// Expected number of URLs.
    #[arg(long)]
    n: u64,
    /// Target false-positive rate, strictly between 0 and 1.
    #[arg(long)]
    p: f64,
}

#[derive(Args, Clone)]
struct ConfigArgs {
    /// Configuration file (defaults apply when omitted).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Override a key of the file: SECTION.KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    set: Vec<String>,
}

impl ConfigArgs {
    fn load(&self) -> Result<Config, crawldedup::ConfigError> {
        match &self.config {
            Some(path) => Config::load(path, &self.set),
            None => Config::from_toml_str("", "defaults", &self.set),
        }
    }
}

/// Exit code for a bad configuration or input file.
const EXIT_CONFIG: u8 = 2;

fn main() -> ExitCode {
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
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
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
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colours only for a person at a terminal, never into a log file or a pipe.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(io::IsTerminal::is_terminal(&io::stderr()))
        .with_writer(io::stderr)
        .with_target(false)
        .init();
}

/// `verify` (no `accept_loss`) or `repair`: one line per part; exit code 1 if any part is
/// wrong (verify) or could not be mended (repair).
fn state_command(
    args: &StateArgs,
    repair: Option<(bool, &ConfigArgs)>,
) -> Result<ExitCode, Failure> {
    if !args.state_dir.is_dir() {
        return Err(Failure::Setup(format!(
            "state directory {}: not a directory",
            args.state_dir.display()
        )));
    }
    let out = args.out_dir.as_deref();
    let parts = match repair {
        None => crawldedup::state::verify(&args.state_dir, out),
        Some((accept_loss, config)) => {
            let config = config.load().map_err(Failure::Config)?;
            crawldedup::state::repair(&args.state_dir, out, accept_loss, &config)
        }
    };
    for part in &parts {
        println!("{part}");
    }
    Ok(if parts.iter().all(|p| p.result.is_ok()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
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
        Command::Repair(args) => state_command(&args.state, Some((args.accept_loss, &args.config))),
        Command::Stats(args) => {
            let summary = crawldedup::crawl::stats(&args.state_dir)
                .map_err(|e| Failure::Setup(e.to_string()))?;
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

fn canonicalize(args: CanonicalizeArgs) -> Result<ExitCode, Failure> {
    let config = args.config.load()?;
    let canon = Canonicalizer::new(config.url_filter.canonical_options());
    let base = match &args.base {
        Some(b) => Some(
            canon
                .canonicalize(b)
                .map_err(|e| anyhow::anyhow!("--base `{b}`: {e}"))?,
        ),
        None => None,
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let mut any_bad = false;
    for input in &args.urls {
        let result = match &base {
            Some(base) => canon.canonicalize_link(base, input),
            None => canon.canonicalize(input),
        };
        match result {
            Ok(url) => writeln!(out, "{url}")?,
            Err(e) => {
                any_bad = true;
                writeln!(out, "error: {e}")?;
            }
        }
    }
    out.flush()?;
    Ok(if any_bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn bloom_params(args: BloomParamsArgs) -> Result<ExitCode, Failure> {
    let refused = |e: crawldedup::SeenError| Failure::Setup(e.to_string());
    let single = BloomParams::new(args.n, args.p).map_err(refused)?;
    let seen = SeenConfig {
        expected_urls: args.n,
        false_positive_rate: args.p,
        confirm_on_disk: false,
    };
    let first = seen.first_layer().map_err(refused)?;
    println!("n                 {}", single.n);
    println!("p                 {}", single.p);
    println!("m (bits)          {}", single.m);
    println!("k (hashes)        {}", single.k);
    println!("bytes             {}", single.bytes());
    println!("bits per URL      {:.2}", single.m as f64 / single.n as f64);
    println!("expected fp at n  {:.6}", single.expected_fp_rate(single.n));
    println!(
        "scalable filter   first layer m = {} k = {} ({} bytes) at p/2, so the rate stays below p past n",
        first.m,
        first.k,
        first.bytes()
    );
    Ok(ExitCode::SUCCESS)
}

fn index_plan(args: IndexPlanArgs) -> Result<ExitCode, Failure> {
    use crawldedup::index::plan::Plan;
    if args.n == 0 {
        return Err(Failure::Setup("--n: must be at least 1".into()));
    }
    let chosen = Plan::choose(args.n, args.k, args.budget)
        .ok_or_else(|| Failure::Setup(format!("--k {}: no layout (k must be below 16)", args.k)))?;
    println!(
        "n = {}, k = {}, budget {} candidates per query",
        args.n, args.k, args.budget
    );
    println!("blocks tables key-bits candidates/query bytes/fp");
    for option in Plan::options(args.n, args.k) {
        let mark = if option.blocks as usize == chosen.blocks.len() {
            "  <- chosen"
        } else {
            ""
        };
        println!("{option}{mark}");
    }
    Ok(ExitCode::SUCCESS)
}

/// An input named on the command line: `-` (or no name at all) is stdin.
struct Input {
    name: String,
    bytes: Vec<u8>,
}

/// The most bytes an input may hold, read or decompressed (a gzip bomb stops here).
const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads one input (`-` is stdin). A gzip-compressed input (a saved `.html.gz`) is
/// decompressed. The error names the input and the problem.
fn read_input(path: &Path) -> Result<Input, String> {
    use io::Read;
    let name = path.display().to_string();
    let too_big = || format!("{name}: larger than {} MiB", MAX_INPUT_BYTES >> 20);
    let mut bytes = Vec::new();
    let read = if name == "-" {
        io::stdin()
            .lock()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| format!("{name}: {e}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_big());
    }
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut plain)
            .map_err(|e| format!("{name}: corrupt gzip data: {e}"))?;
        if plain.len() as u64 > MAX_INPUT_BYTES {
            return Err(too_big());
        }
        bytes = plain;
    }
    Ok(Input { name, bytes })
}

/// Calls `each` with every text input in turn (stdin when there are none), reading one at
/// a time. An input that cannot be read, or that is binary rather than text, gets one line
/// on stderr and is passed over; the result is exit code 1 if any was.
fn for_each_text_input(
    files: &[PathBuf],
    mut each: impl FnMut(Input) -> Result<(), Failure>,
) -> Result<ExitCode, Failure> {
    let stdin = [PathBuf::from("-")];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let mut failed = false;
    for path in files {
        match read_input(path) {
            Ok(input) if crawldedup::content::decode::looks_binary(&input.bytes) => {
                eprintln!("error: {}: binary data, not text", input.name);
                failed = true;
            }
            Ok(input) => each(input)?,
            Err(problem) => {
                eprintln!("error: {problem}");
                failed = true;
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn extract(args: ExtractArgs) -> Result<ExitCode, Failure> {
    let url = match &args.url {
        Some(u) => Some(url::Url::parse(u).map_err(|e| anyhow::anyhow!("--url `{u}`: {e}"))?),
        None => None,
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let code = for_each_text_input(&args.files, |input| {
        let page = crawldedup::content::extract_bytes(&input.bytes, None, url.as_ref());
        if args.json {
            let line = serde_json::json!({
                "file": input.name,
                "title": page.title,
                "text": page.text,
            });
            writeln!(out, "{line}")?;
        } else {
            writeln!(out, "{}", page.text)?;
        }
        // Each input's output is complete before the next input's error line.
        out.flush()?;
        Ok(())
    })?;
    out.flush()?;
    Ok(code)
}

fn simhash(args: SimhashArgs) -> Result<ExitCode, Failure> {
    let mut out = BufWriter::new(io::stdout().lock());
    let code = for_each_text_input(&args.files, |input| {
        let text = if args.text {
            String::from_utf8_lossy(&input.bytes).into_owned()
        } else {
            crawldedup::content::extract_bytes(&input.bytes, None, None).text
        };
        let fingerprint = crawldedup::Fingerprint::of(&text);
        writeln!(out, "{}  {}", fingerprint.simhash, input.name)?;
        out.flush()?;
        Ok(())
    })?;
    out.flush()?;
    Ok(code)
}

fn dedup(args: DedupArgs) -> Result<ExitCode, Failure> {
    let config = args.config.load()?;
    let temporary;
    let state_dir = match &args.state_dir {
        Some(dir) => dir.clone(),
        None => {
            temporary = tempfile::tempdir()
                .map_err(|e| anyhow::anyhow!("temporary state directory: {e}"))?;
            temporary.path().to_path_buf()
        }
    };
    // A state directory that will not open (damaged, or of another format) is a problem
    // with what the command was given: one line, exit code 2.
    let stage =
        crawldedup::Dedup::open(&state_dir, &config).map_err(|e| Failure::Setup(e.to_string()))?;
    let mut out = BufWriter::new(io::stdout().lock());
    for path in &args.files {
        let name = path.display().to_string();
        let bytes = read_input(path).map_err(anyhow::Error::msg)?.bytes;
        let verdict = stage.check_page(&name, &bytes, None)?;
        if args.json {
            let mut line = serde_json::Map::new();
            line.insert("file".into(), name.clone().into());
            line.extend(verdict.json_fields());
            writeln!(out, "{}", serde_json::Value::Object(line))?;
        } else {
            match &verdict {
                crawldedup::PageVerdict::Unique { fingerprint, .. } => {
                    writeln!(out, "unique           {name}  ({fingerprint})")?
                }
                crawldedup::PageVerdict::ExactDuplicate { of } => {
                    writeln!(out, "exact_duplicate  {name}  of {}", of.name)?
                }
                crawldedup::PageVerdict::NearDuplicate {
                    of,
                    distance,
                    similarity,
                } => writeln!(
                    out,
                    "near_duplicate   {name}  of {} (distance {distance}, similarity {:.2})",
                    of.name, similarity.resemblance
                )?,
                crawldedup::PageVerdict::NoText => writeln!(out, "no_text          {name}")?,
            }
        }
    }
    out.flush()?;
    stage.checkpoint()?;
    Ok(ExitCode::SUCCESS)
}

fn crawl(args: CrawlArgs) -> Result<ExitCode, Failure> {
    let mut config = args.config.load()?;
    config.crawl.seeds.extend(args.seeds);
    config.crawl.seed_files.extend(args.seed_files);
    if let Some(dir) = args.state_dir {
        config.crawl.state_dir = dir;
    }
    if let Some(dir) = args.out_dir {
        config.crawl.out_dir = dir;
    }
    if let Some(n) = args.max_pages {
        config.crawl.max_pages = n;
    }
    if args.allow_private_ips {
        config.crawl.allow_private_ips = true;
    }
    config.validate("command line")?;
    let runtime =
        tokio::runtime::Runtime::new().map_err(|e| anyhow::anyhow!("tokio runtime: {e}"))?;
    let options = crawldedup::crawl::CrawlOptions {
        progress_bar: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        ..crawldedup::crawl::CrawlOptions::default()
    };
    let summary = runtime
        .block_on(
            crawldedup::Crawler::builder(&config)
                .options(&options)
                .run(crawldedup::adapters::serve::shutdown_signal()),
        )
        .map_err(|e| match e {
            // A setup problem (a seed, a seed file, a pattern, the state directory) is a
            // configuration error: exit code 2.
            crawldedup::crawl::CrawlError::Setup(_)
            | crawldedup::crawl::CrawlError::State { .. }
            | crawldedup::crawl::CrawlError::OutputBehind { .. } => Failure::Setup(e.to_string()),
            other => Failure::from(other),
        })?;
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        print_summary(&summary);
    }
    Ok(ExitCode::SUCCESS)
}

fn serve(args: ServeArgs) -> Result<ExitCode, Failure> {
    use crawldedup::adapters::serve;
    let config = args.config.load()?;
    let addr: std::net::SocketAddr = args
        .listen
        .parse()
        .map_err(|e| Failure::Setup(format!("--listen {}: {e} (expected IP:PORT)", args.listen)))?;
    if args.token.as_deref().is_some_and(|t| t.trim().is_empty()) {
        // An empty token would either turn authentication off without a word or lock
        // every client out; neither is what was meant.
        return Err(Failure::Setup(
            "--token (or CRAWLDEDUP_TOKEN) is empty: give a token, or leave both unset to \
             serve without one"
                .into(),
        ));
    }
    if !serve::is_loopback(&addr) && args.token.is_none() {
        tracing::warn!("listening on {addr} without a token: anyone who can reach it can use it");
    }
    let stage = crawldedup::Dedup::open(&args.state_dir, &config)
        .map_err(|e| Failure::Setup(e.to_string()))?;
    let every = std::time::Duration::from(args.checkpoint_every);
    let options = serve::ServeOptions {
        token: args.token,
        max_request_bytes: args.max_request_bytes,
        checkpoint_every: (!every.is_zero()).then_some(every),
        durability: args.durability,
        ..serve::ServeOptions::default()
    };
    let runtime =
        tokio::runtime::Runtime::new().map_err(|e| anyhow::anyhow!("tokio runtime: {e}"))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Failure::Setup(format!("--listen {addr}: {e}")))?;
        let bound = listener.local_addr().map_err(|e| anyhow::anyhow!("{e}"))?;
        // The first stdout line names the address, so that a script that asked for port 0
        // learns the port.
        println!("listening on http://{bound}");
        io::stdout().flush()?;
        serve::serve(
            std::sync::Arc::new(stage),
            listener,
            options,
            serve::shutdown_signal(),
        )
        .await
        .map_err(|e| Failure::from(anyhow::anyhow!("{e}")))?;
        eprintln!("stopped with a checkpoint");
        Ok::<_, Failure>(ExitCode::SUCCESS)
    })
}

fn print_summary(summary: &crawldedup::crawl::CrawlSummary) {
    let t = &summary.totals;
    let f = &summary.frontier;
    println!("fetched      {}", t.fetched);
    println!("stored       {}", t.stored);
    println!("duplicates   {}", t.duplicates);
    println!("failed       {}", t.failures);
    println!("queued       {} (in flight {})", f.pending, f.in_flight);
    println!("checkpoints  {}", t.seq);
    if summary.seconds == 0.0 {
        // Figures read from disk: no run time to report.
        return;
    }
    println!(
        "time         {:.1} s ({} pages fetched by this run, {:.1} pages/s){}",
        summary.seconds,
        summary.fetched_this_run,
        summary.fetched_this_run as f64 / summary.seconds.max(1e-9),
        if summary.page_limit_reached {
            ", stopped at crawl.max_pages (it counts every run of this crawl): raise it to \
             go on"
        } else if summary.stopped_early {
            ", stopped early: run again to resume"
        } else {
            ""
        }
    );
}

fn run_demo() -> Result<ExitCode, Failure> {
    println!("crawldedup demo: links as a crawler meets them, through the URL layer\n");
    let outcomes = demo::run_url_layer()?;
    let (mut new, mut seen, mut invalid) = (0, 0, 0);
    for (link, outcome) in &outcomes {
        match outcome {
            LinkOutcome::New(url) => {
                new += 1;
                println!("new      {link}\n         -> {url}");
            }
            LinkOutcome::Seen(url) => {
                seen += 1;
                println!("seen     {link}\n         -> {url}");
            }
            LinkOutcome::Invalid(reason) => {
                invalid += 1;
                println!("invalid  {link}\n         -> {reason}");
            }
        }
    }
    println!(
        "\n{} links: {new} to fetch, {seen} dropped as variants of a URL already seen, {invalid} not crawlable",
        outcomes.len()
    );

    println!("\n== a whole crawl, offline: a generated site served on loopback\n");
    let runtime =
        tokio::runtime::Runtime::new().map_err(|e| anyhow::anyhow!("tokio runtime: {e}"))?;
    let report = runtime
        .block_on(demo::run_crawl())
        .map_err(|e| anyhow::anyhow!("demo crawl: {e}"))?;
    println!("site: {}", report.site);
    print_summary(&report.summary);
    println!("\nduplicates by verdict:");
    for (verdict, n) in &report.duplicates {
        println!("  {verdict:16} {n}");
    }
    println!("not stored, by reason:");
    for (kind, n) in &report.failures {
        println!("  {kind:16} {n}");
    }
    println!("examples:");
    for (url, of, verdict) in &report.examples {
        println!("  {url}\n    {verdict} of {of}");
    }
    println!(
        "\nURL variants (tracking parameters, fragments, session ids) were never fetched; \
         robots.txt kept the crawler out of /private/; the endless calendar stopped at the \
         depth limit. `crawldedup crawl --seed URL` runs the same crawl on a site of your own."
    );
    Ok(ExitCode::SUCCESS)
}
