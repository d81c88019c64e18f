//! The arguments of every command (clap definitions).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use crawldedup::Config;

/// Keeps web crawls free of repeats: canonical URLs, a tuned Bloom filter, boilerplate
/// removal and a persistent simhash index.
#[derive(Parser)]
#[command(name = "crawldedup", version, about, long_about = None)]
pub(super) struct Cli {
    /// More log output (-v: debug, -vv: trace). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(super) verbose: u8,
    /// Only errors in the log.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(super) quiet: bool,
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Subcommand)]
pub(super) enum Command {
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
    /// Runs HTML files and WARC files (.warc, .warc.gz: every response record), in the order
    /// given, through the page stage and prints each verdict.
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
    /// A crawl on several machines: finds pages kept by two workers although one repeats
    /// the other (possible only when a Redis node that failed over lost a write), and
    /// prints each later copy as a JSON line, recorded as a duplicate of the earlier.
    Reconcile(ReconcileArgs),
    /// Writes a self-contained HTML report of a crawl, finished or running: its figures,
    /// plots (throughput, near-duplicate distance and resemblance, duplicate rate by host)
    /// and the largest duplicate clusters, as of its last checkpoint.
    Report(ReportArgs),
    /// Serves the generated test site on loopback (for the Python package's tests).
    #[command(hide = true)]
    FixtureSite(FixtureSiteArgs),
}

#[derive(Args)]
pub(super) struct FixtureSiteArgs {
    /// The site's seed.
    #[arg(long, default_value_t = 21)]
    pub(super) seed: u64,
    /// Articles per topic.
    #[arg(long, default_value_t = 6)]
    pub(super) per_topic: usize,
    /// Append the path and query of every request to this file, one per line.
    #[arg(long, value_name = "FILE")]
    pub(super) log: Option<std::path::PathBuf>,
}

#[derive(Args)]
pub(super) struct ReconcileArgs {
    /// The Redis Cluster nodes (comma-separated redis://HOST:PORT).
    #[arg(long, value_name = "NODES", value_delimiter = ',', required = true)]
    pub(super) cluster: Vec<String>,
    /// The crawl's name in the cluster (cluster.name).
    #[arg(long, value_name = "NAME", default_value = "crawl")]
    pub(super) cluster_name: String,
    /// The index settings the crawl used (`[dedup]`, `[url_filter]`).
    #[command(flatten)]
    pub(super) config: ConfigArgs,
}

#[derive(Args)]
pub(super) struct ServeArgs {
    /// Address to listen on; loopback unless told otherwise. Port 0 picks a free port.
    #[arg(long, value_name = "ADDR", default_value = crawldedup::adapters::serve::DEFAULT_LISTEN)]
    pub(super) listen: String,
    /// Where the URL filter and index live; resumed when it holds earlier state.
    #[arg(long, value_name = "DIR")]
    pub(super) state_dir: PathBuf,
    /// Require `Authorization: Bearer <token>` on every route but /healthz. Read from the
    /// environment variable CRAWLDEDUP_TOKEN when not given here.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "CRAWLDEDUP_TOKEN",
        hide_env_values = true
    )]
    pub(super) token: Option<String>,
    /// Largest request body in bytes (at least 1024).
    #[arg(long, value_name = "BYTES",
          default_value_t = crawldedup::adapters::serve::DEFAULT_MAX_REQUEST_BYTES,
          value_parser = max_request_bytes)]
    pub(super) max_request_bytes: usize,
    /// Checkpoint this often (for example 30s, 5m); 0: only on POST /v1/checkpoint and when
    /// stopping.
    #[arg(long, value_name = "DURATION",
          default_value_t = crawldedup::adapters::serve::DEFAULT_CHECKPOINT_EVERY.into())]
    pub(super) checkpoint_every: humantime::Duration,
    /// When an answer is durable: `answered` (before it goes out: every page answered
    /// `unique` and every URL answered `new` survives a kill -9) or `checkpoint` (at the
    /// next checkpoint; faster, and a kill -9 forgets the pages and URLs recorded since).
    #[arg(long, value_name = "WHEN", default_value = "answered")]
    pub(super) durability: crawldedup::adapters::serve::Durability,
    /// Open a state directory that another command keeps (a crawl's, a sidecar's, a dedup
    /// run's) instead of refusing it; both keep every document.
    #[arg(long)]
    pub(super) share_state: bool,
    #[command(flatten)]
    pub(super) config: ConfigArgs,
}

#[derive(Args)]
pub(super) struct StateArgs {
    /// The state directory (of a crawl, `serve` or `dedup`).
    #[arg(long, value_name = "DIR")]
    pub(super) state_dir: PathBuf,
    /// A crawl's output directory, checked against its last checkpoint.
    #[arg(long = "out", value_name = "DIR")]
    pub(super) out_dir: Option<PathBuf>,
}

#[derive(Args)]
pub(super) struct RepairArgs {
    #[command(flatten)]
    pub(super) state: StateArgs,
    /// Accept losing what cannot be recovered: outside a crawl, rebuild a damaged URL filter
    /// from the stored pages alone (URLs answered `new` that never became pages are
    /// forgotten); set a damaged URL journal generation aside; accept the documents a
    /// damaged index still holds.
    #[arg(long)]
    pub(super) accept_loss: bool,
    /// A cluster worker that is not coming back: settle its last checkpoint's hand-over
    /// with these Redis Cluster nodes (comma-separated redis://HOST:PORT), giving back the
    /// pages the cluster never took (see docs/cluster.md).
    #[arg(long, value_name = "NODES", value_delimiter = ',')]
    pub(super) cluster: Vec<String>,
    /// The crawl's name in the cluster (cluster.name).
    #[arg(long, value_name = "NAME")]
    pub(super) cluster_name: Option<String>,
    /// Sizes a rebuilt URL filter (`[url_filter]`, as for a new state directory).
    #[command(flatten)]
    pub(super) config: ConfigArgs,
}

#[derive(Args)]
pub(super) struct StatsArgs {
    /// The crawl's state directory.
    #[arg(long, value_name = "DIR", required_unless_present = "cluster")]
    pub(super) state_dir: Option<PathBuf>,
    /// A crawl on several machines instead: every worker's figures from these Redis
    /// Cluster nodes (comma-separated redis://HOST:PORT).
    #[arg(
        long,
        value_name = "NODES",
        value_delimiter = ',',
        conflicts_with = "state_dir"
    )]
    pub(super) cluster: Vec<String>,
    /// The crawl's name in the cluster (cluster.name).
    #[arg(long, value_name = "NAME", default_value = "crawl")]
    pub(super) cluster_name: String,
    /// As one JSON object.
    #[arg(long)]
    pub(super) json: bool,
}

#[derive(Args)]
pub(super) struct ReportArgs {
    #[command(flatten)]
    pub(super) config: ConfigArgs,
    /// The crawl's state directory.
    #[arg(long, value_name = "DIR")]
    pub(super) state_dir: PathBuf,
    /// The crawl's output directory (default: crawl.out_dir of the configuration).
    #[arg(long, value_name = "DIR")]
    pub(super) outputs: Option<PathBuf>,
    /// The report to write (HTML).
    #[arg(long, value_name = "FILE")]
    pub(super) out: PathBuf,
}

#[derive(Args)]
pub(super) struct CrawlArgs {
    #[command(flatten)]
    pub(super) config: ConfigArgs,
    /// A start URL (repeatable; added to crawl.seeds).
    #[arg(long = "seed", value_name = "URL")]
    pub(super) seeds: Vec<String>,
    /// A file of start URLs (repeatable; added to crawl.seed_files).
    #[arg(long = "seeds", value_name = "FILE")]
    pub(super) seed_files: Vec<PathBuf>,
    /// crawl.state_dir
    #[arg(long, value_name = "DIR")]
    pub(super) state_dir: Option<PathBuf>,
    /// crawl.out_dir
    #[arg(long = "out", value_name = "DIR")]
    pub(super) out_dir: Option<PathBuf>,
    /// crawl.max_pages: stop once this many pages are fetched, counting every run of this
    /// crawl (a resumed crawl counts what earlier runs fetched)
    #[arg(long)]
    pub(super) max_pages: Option<u64>,
    /// crawl.allow_private_ips = true
    #[arg(long)]
    pub(super) allow_private_ips: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub(super) json: bool,
    /// cluster.nodes: crawl as a worker of a cluster through these Redis Cluster nodes
    /// (comma-separated redis://HOST:PORT)
    #[arg(long, value_name = "NODES", value_delimiter = ',')]
    pub(super) cluster: Vec<String>,
    /// cluster.worker_id
    #[arg(long, value_name = "ID")]
    pub(super) worker_id: Option<String>,
    /// cluster.weight
    #[arg(long, value_name = "W")]
    pub(super) weight: Option<u32>,
    /// cluster.name
    #[arg(long, value_name = "NAME")]
    pub(super) cluster_name: Option<String>,
    /// cluster.wait_for_workers: start the crawl when this many workers are alive
    #[arg(long, value_name = "N")]
    pub(super) wait_for_workers: Option<u32>,
    /// Checkpoint this often (for example 500ms, 5s, 1m); 0: only when the crawl stops (a
    /// kill -9 then loses the whole run).
    #[arg(long, value_name = "DURATION",
          default_value_t = crawldedup::crawl::CHECKPOINT_EVERY.into())]
    pub(super) checkpoint_every: humantime::Duration,
    /// Open a state directory that another command keeps (a crawl's, a sidecar's, a dedup
    /// run's) instead of refusing it; both keep every document.
    #[arg(long)]
    pub(super) share_state: bool,
    /// Serve Prometheus metrics (/metrics), the status page (/) and its figures
    /// (/status.json) on this address while the crawl runs, for example 127.0.0.1:9898
    #[arg(long, value_name = "IP:PORT")]
    pub(super) metrics: Option<String>,
    /// Keep --metrics up this long after the crawl is over (for example 1m), serving the
    /// final figures for a last scrape; Ctrl-C ends it sooner
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "0s",
        requires = "metrics"
    )]
    pub(super) metrics_linger: humantime::Duration,
}

#[derive(Args)]
pub(super) struct ExtractArgs {
    /// HTML files (read as raw bytes); stdin when none or `-`.
    pub(super) files: Vec<PathBuf>,
    /// One line per input: {"file","title","text"}.
    #[arg(long)]
    pub(super) json: bool,
    /// With --json: add "blocks", what each block of the text (split at blank lines) is:
    /// "story", "list" or "aside".
    #[arg(long, requires = "json")]
    pub(super) blocks: bool,
    /// The page's URL, to resolve its links and help guess its charset.
    #[arg(long)]
    pub(super) url: Option<String>,
}

#[derive(Args)]
pub(super) struct SimhashArgs {
    /// Input files; stdin when none or `-`.
    pub(super) files: Vec<PathBuf>,
    /// The inputs are plain main text, not HTML.
    #[arg(long)]
    pub(super) text: bool,
}

#[derive(Args)]
pub(super) struct DedupArgs {
    /// HTML files (or .html.gz) and WARC files (.warc, .warc.gz), decided in this order; each
    /// response record of a WARC file is a page, named by its WARC-Target-URI.
    #[arg(required = true)]
    pub(super) files: Vec<PathBuf>,
    /// Keep the index (and URL filter) here, and resume from it; a temporary directory
    /// otherwise.
    #[arg(long, value_name = "DIR")]
    pub(super) state_dir: Option<PathBuf>,
    /// Open a state directory that another command keeps (a crawl's, a sidecar's, a dedup
    /// run's) instead of refusing it; both keep every document.
    #[arg(long)]
    pub(super) share_state: bool,
    /// One JSON line per page: "file", "verdict" (unique, exact_duplicate, near_duplicate,
    /// no_text); for a duplicate "of" and "distance", for a near one also "similarity" and
    /// "containment"; for a unique page "id", "simhash", "digest" and, when a stored page was
    /// a refused candidate, "nearest_similarity"; "url" when the page names one; for a WARC
    /// record "offset", and for a duplicate of a record stored in the run "of_file" and
    /// "of_offset".
    #[arg(long)]
    pub(super) json: bool,
    /// Write a deduplicated copy of each WARC or ARC input here, `NAME.warc.gz`, with its
    /// CDXJ index `NAME.cdxj` (pywb's format): every record as it was, but responses whose
    /// payload repeats one copied before, which become identical-payload-digest revisits
    /// of it; other duplicates keep their bytes and get crawldedup's verdict in
    /// `WARC-Crawldedup-*` fields (see --warc-duplicates). The bytes saved are reported.
    #[arg(long, value_name = "DIR")]
    pub(super) warc_out: Option<PathBuf>,
    /// How --warc-out writes a duplicate whose payload is not its original's: `response`
    /// (its own bytes, with the verdict) or `revisit` (a revisit under crawldedup's own
    /// profile: smaller, and its bytes are not kept).
    #[arg(
        long,
        value_name = "HOW",
        default_value = "response",
        requires = "warc_out"
    )]
    pub(super) warc_duplicates: WarcDuplicates,
    #[command(flatten)]
    pub(super) config: ConfigArgs,
}

/// How `dedup --warc-out` writes a duplicate whose payload is not its original's.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(super) enum WarcDuplicates {
    /// Its own bytes, with the verdict.
    Response,
    /// A revisit under crawldedup's own profile.
    Revisit,
}

#[derive(Args)]
pub(super) struct IndexPlanArgs {
    /// Expected number of fingerprints.
    #[arg(long)]
    pub(super) n: u64,
    /// Largest Hamming distance called a near-duplicate.
    #[arg(long, default_value_t = 3)]
    pub(super) k: u32,
    /// Budget of expected candidates per query.
    #[arg(long, default_value_t = crawldedup::index::plan::DEFAULT_CANDIDATE_BUDGET)]
    pub(super) budget: f64,
}

#[derive(Args)]
pub(super) struct CanonicalizeArgs {
    /// URLs to canonicalize; none (or `-`): one URL a line from stdin.
    pub(super) urls: Vec<String>,
    /// Resolve the URLs as links found on this page.
    #[arg(long)]
    pub(super) base: Option<String>,
    #[command(flatten)]
    pub(super) config: ConfigArgs,
}

#[derive(Args)]
pub(super) struct BloomParamsArgs {
    /// Expected number of URLs.
    #[arg(long)]
    pub(super) n: u64,
    /// Target false-positive rate, strictly between 0 and 1.
    #[arg(long)]
    pub(super) p: f64,
}

#[derive(Args, Clone)]
pub(super) struct ConfigArgs {
    /// Configuration file (defaults apply when omitted).
    #[arg(long, value_name = "FILE")]
    pub(super) config: Option<PathBuf>,
    /// Override a key of the file: SECTION.KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    pub(super) set: Vec<String>,
}

impl ConfigArgs {
    pub(super) fn load(&self) -> Result<Config, crawldedup::ConfigError> {
        match &self.config {
            Some(path) => Config::load(path, &self.set),
            None => Config::from_toml_str("", "defaults", &self.set),
        }
    }
}

/// Exit code for a bad configuration or input file.
pub(super) const EXIT_CONFIG: u8 = 2;

/// The least `--max-request-bytes`: a body under it could not hold one URL check.
const MIN_REQUEST_BYTES: usize = 1024;

fn max_request_bytes(text: &str) -> Result<usize, String> {
    let bytes: usize = text
        .parse()
        .map_err(|e| format!("`{text}` is not a number of bytes: {e}"))?;
    if bytes < MIN_REQUEST_BYTES {
        return Err(format!(
            "{bytes} is under {MIN_REQUEST_BYTES}: every request would be refused"
        ));
    }
    Ok(bytes)
}
