//! One function per command: each reads its arguments, calls the library and prints.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use crawldedup::{BloomParams, Canonicalizer, SeenConfig};

use super::Failure;
use super::args::{
    BloomParamsArgs, CanonicalizeArgs, CrawlArgs, ExtractArgs, IndexPlanArgs, ReconcileArgs,
    RepairArgs, ServeArgs, SimhashArgs, StateArgs, StatsArgs,
};
use super::input::for_each_text_input;
use super::print::print_summary;

pub(super) fn canonicalize(args: CanonicalizeArgs) -> Result<ExitCode, Failure> {
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
    // Writes the input's line; true when it was bad.
    let one = |input: &str, out: &mut BufWriter<io::StdoutLock<'_>>| -> io::Result<bool> {
        let result = match &base {
            Some(base) => canon.canonicalize_link(base, input),
            None => canon.canonicalize(input),
        };
        match result {
            Ok(url) => writeln!(out, "{url}").map(|()| false),
            Err(e) => writeln!(out, "error: {e}").map(|()| true),
        }
    };
    if args.urls.is_empty() || args.urls == ["-"] {
        // A line an input, read as it comes, so that a pipe of millions streams through.
        let mut stdin = io::stdin().lock();
        let mut line = Vec::new();
        loop {
            line.clear();
            if io::BufRead::read_until(&mut stdin, b'\n', &mut line)? == 0 {
                break;
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            match std::str::from_utf8(text) {
                Ok(input) => any_bad |= one(input, &mut out)?,
                Err(_) => {
                    any_bad = true;
                    writeln!(out, "error: not UTF-8")?;
                }
            }
        }
    } else {
        for input in &args.urls {
            any_bad |= one(input, &mut out)?;
        }
    }
    out.flush()?;
    Ok(if any_bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

pub(super) fn bloom_params(args: BloomParamsArgs) -> Result<ExitCode, Failure> {
    let refused = |e: crawldedup::SeenError| Failure::Setup(e.to_string());
    let single = BloomParams::new(args.n, args.p).map_err(refused)?;
    let seen = SeenConfig::new(args.n, args.p);
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

pub(super) fn index_plan(args: IndexPlanArgs) -> Result<ExitCode, Failure> {
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

/// `verify` (no `accept_loss`) or `repair`: one line per part; exit code 1 if any part is
/// wrong (verify) or could not be mended (repair).
/// `verify`'s exit code for a state directory that a live process holds.
pub(super) const IN_USE: u8 = 3;

pub(super) fn state_command(
    args: &StateArgs,
    repair: Option<&RepairArgs>,
) -> Result<ExitCode, Failure> {
    if !args.state_dir.is_dir() {
        return Err(Failure::Setup(format!(
            "state directory {}: not a directory",
            args.state_dir.display()
        )));
    }
    let out = args.out_dir.as_deref();
    if repair.is_none() {
        if let Some(holder) = crawldedup::state::in_use(&args.state_dir) {
            // Not damage: a live directory changes under the check. Its own exit code.
            eprintln!(
                "error: state directory {}: {holder}; verify checks a directory that no \
                 process holds: stop it, or verify a copy of the directory taken while it is \
                 stopped (`crawldedup stats` reads a running crawl)",
                args.state_dir.display()
            );
            return Ok(ExitCode::from(IN_USE));
        }
    }
    if let Some(problem) = repair.and_then(|_| crawldedup::state::cannot_repair(&args.state_dir)) {
        return Err(Failure::Setup(format!(
            "state directory {}: {problem}",
            args.state_dir.display()
        )));
    }
    let parts = match repair {
        None => crawldedup::state::verify(&args.state_dir, out),
        Some(repair) => {
            let mut config = repair.config.load().map_err(Failure::Config)?;
            if !repair.cluster.is_empty() {
                config.cluster.nodes = repair.cluster.clone();
            }
            if let Some(name) = &repair.cluster_name {
                config.cluster.name = name.clone();
            }
            crawldedup::state::repair(&args.state_dir, out, repair.accept_loss, &config)
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

pub(super) fn extract(args: ExtractArgs) -> Result<ExitCode, Failure> {
    let url = match &args.url {
        Some(u) => Some(url::Url::parse(u).map_err(|e| anyhow::anyhow!("--url `{u}`: {e}"))?),
        None => None,
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let code = for_each_text_input(&args.files, |input| {
        let page = crawldedup::content::extract_bytes(&input.bytes, None, url.as_ref());
        if args.json {
            let mut line = serde_json::json!({
                "file": input.name,
                "title": page.title,
                "text": page.text,
            });
            if args.blocks {
                line["blocks"] = serde_json::json!(page.blocks);
            }
            // Without --url: the site the page says it belongs to, the host whose template
            // `dedup` applies to it.
            if let Some(site) = &page.site {
                line["site"] = site.clone().into();
            }
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

pub(super) fn simhash(args: SimhashArgs) -> Result<ExitCode, Failure> {
    let mut out = BufWriter::new(io::stdout().lock());
    let code = for_each_text_input(&args.files, |input| {
        // The simhash alone: no digest or sketch, and plain text is not copied.
        let simhash = if args.text {
            crawldedup::fingerprint::simhash(&String::from_utf8_lossy(&input.bytes))
        } else {
            crawldedup::fingerprint::simhash(
                &crawldedup::content::extract_bytes(&input.bytes, None, None).text,
            )
        };
        writeln!(out, "{simhash}  {}", input.name)?;
        out.flush()?;
        Ok(())
    })?;
    out.flush()?;
    Ok(code)
}

pub(super) fn crawl(args: CrawlArgs) -> Result<ExitCode, Failure> {
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
    if !args.cluster.is_empty() {
        config.cluster.nodes = args.cluster;
    }
    if let Some(id) = args.worker_id {
        config.cluster.worker_id = id;
    }
    if let Some(weight) = args.weight {
        config.cluster.weight = weight;
    }
    if let Some(name) = args.cluster_name {
        config.cluster.name = name;
    }
    if let Some(n) = args.wait_for_workers {
        config.cluster.wait_for_workers = n;
    }
    config.validate("command line")?;
    let metrics_listen = match &args.metrics {
        Some(addr) => Some(
            addr.parse::<std::net::SocketAddr>()
                .map_err(|e| Failure::Setup(format!("--metrics {addr}: {e} (expected IP:PORT)")))?,
        ),
        None => None,
    };
    if let Some(addr) = metrics_listen.filter(|a| !crawldedup::adapters::serve::is_loopback(a)) {
        tracing::warn!(
            "--metrics {addr}: the status page and metrics are open to anyone who can reach \
             this address (they name the URLs crawled)"
        );
    }
    let runtime =
        tokio::runtime::Runtime::new().map_err(|e| anyhow::anyhow!("tokio runtime: {e}"))?;
    let options = crawldedup::crawl::CrawlOptions::default()
        .with_progress_bar(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_checkpoint_every(args.checkpoint_every.into())
        .with_share_state(args.share_state)
        .with_metrics(metrics_listen, args.metrics_linger.into());
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
            | crawldedup::crawl::CrawlError::Files(crawldedup::store::files::FileError::Behind {
                ..
            })
            | crawldedup::crawl::CrawlError::Dedup(
                crawldedup::DedupError::Config(_)
                | crawldedup::DedupError::Damaged { .. }
                | crawldedup::DedupError::OtherKind(_),
            ) => Failure::Setup(e.to_string()),
            other => Failure::from(other),
        })?;
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        print_summary(&summary);
    }
    // A crawl that ran to its end without one response (every seed refused, unreachable or
    // failing) did nothing it was asked to: a script must see it. A cluster worker may
    // rightly fetch nothing (the others own every host).
    let nothing_fetched = summary.totals.fetched == 0
        && !summary.stopped_early
        && summary.frontier.pending == 0
        && !config.cluster.enabled();
    if nothing_fetched {
        eprintln!(
            "error: no seed could be fetched; {} says why",
            config.crawl.out_dir.join("failures.jsonl").display()
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn serve(args: ServeArgs) -> Result<ExitCode, Failure> {
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
        // The address first: a port in use is refused before the state directory is made.
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Failure::Setup(format!("--listen {addr}: {e}")))?;
        let stage = crawldedup::Dedup::builder()
            .config(&config)
            .kind(crawldedup::dedup::StateKind::Sidecar)
            .share_state(args.share_state)
            // Answers durable at checkpoints only need no URL journal.
            .url_journal(args.durability == crawldedup::adapters::serve::Durability::Answered)
            .open(&args.state_dir)
            .map_err(|e| Failure::Setup(e.to_string()))?;
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

/// `stats --cluster`: every worker's figures and the totals.
pub(super) fn cluster_stats(args: &StatsArgs) -> Result<ExitCode, Failure> {
    use crawldedup::cluster::{filter::Cluster, stats::stats};
    let fail = |e: crawldedup::cluster::filter::ClusterError| Failure::Setup(e.to_string());
    let cluster = Cluster::connect(&args.cluster).map_err(fail)?;
    let figures = stats(&cluster, &args.cluster_name).map_err(fail)?;
    if args.json {
        println!("{}", serde_json::to_string(&figures)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("crawl `{}`: {} live workers", figures.name, figures.live);
    println!(
        "{:<16} {:>5} {:>7} {:>10} {:>10} {:>10} {:>9} {:>9} {:>8} {:>11}",
        "worker",
        "live",
        "hosts",
        "fetched",
        "stored",
        "duplicates",
        "failures",
        "pending",
        "moved",
        "checkpoint"
    );
    for w in figures
        .workers
        .iter()
        .chain(std::iter::once(&figures.total))
    {
        let (live, share, checkpoint) = if w.worker == "total" {
            (String::new(), String::new(), String::new())
        } else {
            (
                if w.live { "yes" } else { "no" }.to_string(),
                format!("{:.1}%", w.share * 100.0),
                w.checkpoint.to_string(),
            )
        };
        println!(
            "{:<16} {:>5} {:>7} {:>10} {:>10} {:>10} {:>9} {:>9} {:>8} {:>11}",
            w.worker,
            live,
            share,
            w.fetched,
            w.stored,
            w.duplicates,
            w.failures,
            w.pending,
            w.moved,
            checkpoint
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `reconcile --cluster`: later copies of kept pages, as JSON lines.
pub(super) fn reconcile(args: &ReconcileArgs) -> Result<ExitCode, Failure> {
    use crawldedup::cluster::{filter::Cluster, index::SharedIndex};
    let config = args.config.load()?;
    let fail = |e: crawldedup::cluster::filter::ClusterError| Failure::Setup(e.to_string());
    let cluster = Cluster::connect(&args.cluster).map_err(fail)?;
    let index = SharedIndex::open(
        &cluster,
        &args.cluster_name,
        crawldedup::dedup::index_config(&config),
    )
    .map_err(fail)?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut found = 0u64;
    let mut written = Ok(());
    let read = index
        .reconcile(|copy| {
            found += 1;
            if written.is_ok() {
                written = serde_json::to_writer(&mut out, &copy)
                    .map_err(io::Error::from)
                    .and_then(|()| writeln!(out));
            }
        })
        .map_err(fail)?;
    written?;
    out.flush()?;
    eprintln!(
        "crawl `{}`: {read} kept pages read, {found} later copies of earlier ones",
        args.cluster_name
    );
    Ok(ExitCode::SUCCESS)
}

/// Serves the generated test site (without its traps) on 127.0.0.1 until SIGINT or SIGTERM,
/// printing `listening on URL` first; with `--log`, every request's path and query goes to
/// the file as it arrives.
pub(super) fn fixture_site(args: &super::args::FixtureSiteArgs) -> Result<ExitCode, Failure> {
    use std::io::Write as _;
    let runtime =
        tokio::runtime::Runtime::new().map_err(|e| anyhow::anyhow!("tokio runtime: {e}"))?;
    runtime.block_on(async {
        let site = crawldedup::fixture::Site::without_traps(args.seed, args.per_topic);
        let server = crawldedup::fixture::serve(site)
            .await
            .map_err(|e| anyhow::anyhow!("fixture site: {e}"))?;
        let mut log = match &args.log {
            Some(path) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| anyhow::anyhow!("--log {}: {e}", path.display()))?,
            ),
            None => None,
        };
        println!("listening on {}", server.url(""));
        std::io::stdout().flush()?;
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .map_err(|e| anyhow::anyhow!("SIGTERM handler: {e}"))?;
        loop {
            let stop = tokio::select! {
                _ = tokio::signal::ctrl_c() => true,
                _ = terminate.recv() => true,
                _ = tokio::time::sleep(std::time::Duration::from_millis(20)) => false,
            };
            let requests = server.take_requests();
            if let Some(log) = &mut log {
                for request in requests {
                    writeln!(log, "{request}")?;
                }
            }
            if stop {
                break;
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}
