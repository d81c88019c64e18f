//! `crawldedup dedup`: HTML files and WARC files, in the order given, through the page stage.

use std::collections::HashMap;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use crawldedup::PageVerdict;

use crawldedup::store::warc::DuplicateRecords;

use super::Failure;
use super::args::{DedupArgs, WarcDuplicates};
use super::input::read_input;
use super::warc_out::ArchiveOut;
use crawldedup::archive::{self, Item};

/// Where a stored page came from in this run: a file, and for a WARC record its offset.
type Origin = (String, Option<u64>);

pub(super) fn dedup(args: DedupArgs) -> Result<ExitCode, Failure> {
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
    let stage = crawldedup::Dedup::builder()
        .config(&config)
        .kind(crawldedup::dedup::StateKind::Dedup)
        .share_state(args.share_state)
        .open(&state_dir)
        .map_err(|e| Failure::Setup(e.to_string()))?;
    let records = super::revisits::Records::open(&state_dir).map_err(Failure::Setup)?;
    let copies = match &args.warc_out {
        Some(dir) => {
            let archives: Vec<&std::path::Path> = args
                .files
                .iter()
                .map(|p| p.as_path())
                .filter(|p| archive::is_warc(p) || archive::is_arc(p))
                .collect();
            let duplicates = match args.warc_duplicates {
                WarcDuplicates::Response => DuplicateRecords::Response,
                WarcDuplicates::Revisit => DuplicateRecords::Revisit,
            };
            Some(ArchiveOut::new(dir, duplicates, &archives).map_err(Failure::Setup)?)
        }
        None => None,
    };
    let mut run = Inputs {
        stage: &stage,
        out: BufWriter::new(io::stdout().lock()),
        json: args.json,
        stored: HashMap::new(),
        unreadable: false,
        records,
        copies,
    };
    for path in &args.files {
        if archive::is_warc(path) || archive::is_arc(path) {
            run.warc(path)?;
        } else {
            run.file(path)?;
        }
    }
    run.out.flush()?;
    if let Some(copies) = &run.copies {
        eprintln!("{}", copies.summary());
    }
    run.records
        .save(&state_dir)
        .map_err(|e| anyhow::anyhow!(e))?;
    let unreadable = run.unreadable;
    drop(run);
    stage.close()?;
    Ok(if unreadable {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The inputs decided one by one, each line written as its verdict comes.
struct Inputs<'a, W: Write> {
    stage: &'a crawldedup::Dedup,
    out: W,
    json: bool,
    /// The pages stored in this run, by their id in the index, and where they came from, for
    /// a duplicate's `of_file`: by id, not by name, as several inputs can share a name (two
    /// saved pages that give themselves one canonical address, a URL archived twice).
    stored: HashMap<crawldedup::DocId, Origin>,
    /// An input, or a record of one, could not be read.
    unreadable: bool,
    /// The WARC response records read in this run, for the revisits that name them.
    records: super::revisits::Records,
    /// The deduplicated copies of the archives (`--warc-out`).
    copies: Option<ArchiveOut>,
}

impl<W: Write> Inputs<'_, W> {
    /// An input that cannot be read is named on stderr, after the lines before it, and the
    /// others are still decided.
    fn unreadable(&mut self, problem: &str) -> io::Result<()> {
        self.out.flush()?;
        eprintln!(
            "error: {}",
            archive::printable_line(problem, archive::PROBLEM_CHARS)
        );
        self.unreadable = true;
        Ok(())
    }

    /// What was wrong with a record and forgiven, on stderr after the lines before it.
    fn forgiven(&mut self, problem: &str) -> io::Result<()> {
        self.out.flush()?;
        eprintln!(
            "warning: {}",
            archive::printable_line(problem, archive::PROBLEM_CHARS)
        );
        Ok(())
    }

    /// Every response record of a WARC file.
    fn warc(&mut self, path: &std::path::Path) -> Result<(), Failure> {
        let file = path.display().to_string();
        if let Some(copies) = &mut self.copies {
            copies.begin(path).map_err(|e| anyhow::anyhow!(e))?;
        }
        let raw = self.copies.is_some();
        let read = archive::each_record(path, raw, |item| {
            let record = match item {
                Item::Response(record) => record,
                Item::Forgiven { offset, problem } => {
                    return Ok(self.forgiven(&format!("{file}@{offset}: {problem}"))?);
                }
                Item::Revisit(revisit) => {
                    self.copy(|c| c.keep(&revisit.raw))?;
                    return self.revisit(&file, &revisit);
                }
                Item::Other { raw, .. } => return self.copy(|c| c.keep(&raw)),
            };
            self.records.add(
                super::revisits::Read {
                    uri: record.uri.clone(),
                    file: file.clone(),
                    offset: record.offset,
                },
                record.record_id.as_deref(),
                record.payload_digest.as_deref(),
            );
            let where_ = format!("{file}@{}", record.offset);
            for warning in &record.warnings {
                self.forgiven(&format!("{where_} ({}): {warning}", record.uri))?;
            }
            match record.body {
                Ok(body) => {
                    // A record is named by its URL: its host's template applies.
                    let name = if record.uri.is_empty() {
                        where_.clone()
                    } else {
                        record.uri.clone()
                    };
                    let verdict =
                        self.stage
                            .check_page(&name, &body, record.content_type.as_deref())?;
                    let origin = (file.clone(), Some(record.offset));
                    let mut fields = serde_json::Map::new();
                    fields.insert("file".into(), file.clone().into());
                    fields.insert("offset".into(), record.offset.into());
                    fields.insert("url".into(), record.uri.clone().into());
                    report(
                        &mut self.out,
                        self.json,
                        &where_,
                        fields,
                        &verdict,
                        &self.stored,
                    )?;
                    self.copy(|c| c.response(&record.raw, Some(&verdict)))?;
                    if let PageVerdict::Unique { id, .. } = verdict {
                        self.stored.insert(id, origin);
                    }
                }
                Err(problem) => {
                    self.copy(|c| c.response(&record.raw, None))?;
                    self.unreadable(&format!("{where_} ({}): {problem}", record.uri))?;
                }
            }
            Ok(())
        })?;
        let whole = read.is_ok();
        if let Err(problem) = read {
            self.unreadable(&problem)?;
        }
        let Some(copies) = &mut self.copies else {
            return Ok(());
        };
        if let Some(partial) = copies.end(whole).map_err(|e| anyhow::anyhow!(e))? {
            self.unreadable(&partial)?;
        }
        Ok(())
    }

    /// Writes to the deduplicated copy, when there is one.
    fn copy(
        &mut self,
        write: impl FnOnce(&mut ArchiveOut) -> Result<(), String>,
    ) -> Result<(), Failure> {
        match &mut self.copies {
            Some(copies) => write(copies).map_err(|e| Failure::from(anyhow::anyhow!(e))),
            None => Ok(()),
        }
    }

    /// A `revisit` record: never decided as a page; its line names the record it repeats
    /// (`of`, `of_file`, `of_offset`), when this run read it, and says so on stderr when not.
    fn revisit(&mut self, file: &str, revisit: &archive::Revisit) -> Result<(), Failure> {
        let original = self.records.original(revisit).cloned();
        let where_ = format!("{file}@{}", revisit.offset);
        if self.json {
            let mut fields = serde_json::Map::new();
            fields.insert("file".into(), file.into());
            fields.insert("offset".into(), revisit.offset.into());
            fields.insert("url".into(), revisit.uri.clone().into());
            fields.insert("verdict".into(), "revisit".into());
            fields.insert("of".into(), original.as_ref().map(|o| o.uri.clone()).into());
            if let Some(o) = &original {
                fields.insert("of_file".into(), o.file.clone().into());
                fields.insert("of_offset".into(), o.offset.into());
            }
            if let Some(profile) = &revisit.profile {
                fields.insert("profile".into(), profile.clone().into());
            }
            writeln!(self.out, "{}", serde_json::Value::Object(fields))?;
        } else {
            let of = original.as_ref().map_or_else(
                || "a record not read in this run".to_string(),
                |o| format!("{} ({}@{})", o.uri, o.file, o.offset),
            );
            writeln!(self.out, "revisit          {where_}  of {of}")?;
        }
        if original.is_none() {
            let named = revisit
                .refers_to
                .as_deref()
                .or(revisit.refers_to_uri.as_deref())
                .or(revisit.payload_digest.as_deref())
                .unwrap_or("nothing");
            self.forgiven(&format!(
                "{where_} ({}): a revisit of {named}, a record this run did not read",
                revisit.uri
            ))?;
        }
        Ok(())
    }

    /// An HTML file (or any other file, decided on its bytes).
    fn file(&mut self, path: &std::path::Path) -> Result<(), Failure> {
        let file = path.display().to_string();
        let bytes = match read_input(path) {
            Ok(input) => input.bytes,
            Err(problem) => return Ok(self.unreadable(&problem.to_string())?),
        };
        // An HTML file is named by the address it gives itself (`<link rel=canonical>`,
        // else `og:url`), so that its host's template applies; else by its path.
        let prepared = crawldedup::page::prepare(&bytes, None, None);
        let url = prepared
            .as_ref()
            .and_then(|p| p.extracted.canonical.clone());
        let name = url.clone().unwrap_or_else(|| file.clone());
        let verdict = match prepared {
            Some(mut prepared) => {
                self.stage.drop_template(&name, &mut prepared);
                self.stage.decide(&name, &prepared)?
            }
            None => self.stage.check_page(&name, &bytes, None)?,
        };
        let mut fields = serde_json::Map::new();
        fields.insert("file".into(), file.clone().into());
        if let Some(url) = &url {
            fields.insert("url".into(), url.clone().into());
        }
        report(
            &mut self.out,
            self.json,
            &file,
            fields,
            &verdict,
            &self.stored,
        )?;
        if let PageVerdict::Unique { id, .. } = verdict {
            self.stored.insert(id, (file, None));
        }
        Ok(())
    }
}

/// One input's line: `fields` (what names it) and the verdict's, in JSON; or the verdict, the
/// input's name `name` and, for a duplicate, its original, in text. A duplicate of a WARC
/// record stored in this run also names that record (`of_file`, `of_offset`), and of an HTML
/// file named by its URL, that file (`of_file`).
fn report(
    out: &mut impl Write,
    json: bool,
    name: &str,
    mut fields: serde_json::Map<String, serde_json::Value>,
    verdict: &PageVerdict,
    stored: &HashMap<crawldedup::DocId, Origin>,
) -> Result<(), Failure> {
    let origin = match verdict {
        PageVerdict::ExactDuplicate { of } | PageVerdict::NearDuplicate { of, .. } => {
            stored.get(&of.id)
        }
        _ => None,
    };
    if json {
        fields.extend(verdict.json_fields());
        match origin {
            Some((file, Some(offset))) => {
                fields.insert("of_file".into(), file.clone().into());
                fields.insert("of_offset".into(), (*offset).into());
            }
            // An HTML file stored under its URL.
            Some((file, None)) if fields.get("of").and_then(|o| o.as_str()) != Some(file) => {
                fields.insert("of_file".into(), file.clone().into());
            }
            _ => {}
        }
        writeln!(out, "{}", serde_json::Value::Object(fields))?;
        return Ok(());
    }
    let of = |of: &crawldedup::Original| match origin {
        Some((file, Some(offset))) => format!("{} ({file}@{offset})", of.name),
        Some((file, None)) if *file != of.name => format!("{} ({file})", of.name),
        _ => of.name.clone(),
    };
    match verdict {
        PageVerdict::Unique { simhash, .. } => {
            writeln!(out, "unique           {name}  ({simhash})")?
        }
        PageVerdict::ExactDuplicate { of: original } => {
            writeln!(out, "exact_duplicate  {name}  of {}", of(original))?
        }
        PageVerdict::NearDuplicate {
            of: original,
            distance,
            similarity,
        } => writeln!(
            out,
            "near_duplicate   {name}  of {} (distance {distance}, similarity {:.2})",
            of(original),
            similarity.resemblance
        )?,
        PageVerdict::NoText => writeln!(out, "no_text          {name}")?,
        other => writeln!(out, "{:<16} {name}", other.label())?,
    }
    Ok(())
}
