//! The files of a crawl as a sink: `pages.jsonl`, `duplicates.jsonl`, `failures.jsonl`
//! and the WARC files ([`FileSink`]).
//!
//! Serializing JSON and compressing WARC records happen on a thread of their own, so that
//! the loop that decides pages never waits for them. The position at a checkpoint is the
//! three JSONL lengths and the WARC file's number and length; resuming cuts the files back
//! to it (and refuses files shorter than it: extending them would write a hole of zeros).
//! `output.jsonl = false` leaves pages.jsonl and duplicates.jsonl empty; failures.jsonl is
//! always written; `output.warc` adds a WARC response record per stored page and a revisit
//! record per duplicate.

use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bytes::Bytes;
use url::Url;

use super::OutputConfig;
use super::lines::{DuplicateLine, FailureLine, JsonlLine, PageLine, PreviousLine};
use super::{DuplicatePage, FailedPage, PageSink, SinkError, SinkPosition, StoredPage};
use crate::store::warc::{DuplicateOf, WarcPosition, WarcWriter, file_name};

pub use super::error::FileError;

/// The crawl's JSONL files, in the order of a checkpoint's `output_bytes`.
pub const OUTPUT_NAMES: [&str; 3] = ["pages.jsonl", "duplicates.jsonl", "failures.jsonl"];
/// Refuses an output that is shorter than `expected`, the length the last checkpoint
/// recorded (a missing file counts as empty): cutting it back is fine, extending it would
/// write a hole of zeros.
fn check_not_behind(path: &Path, expected: u64) -> Result<(), FileError> {
    let found = match std::fs::metadata(path) {
        Ok(meta) => meta.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(source) => {
            return Err(FileError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if found < expected {
        return Err(FileError::Behind {
            path: path.to_path_buf(),
            found,
            expected,
        });
    }
    Ok(())
}

/// The three JSONL outputs and the WARC writer, owned by the writer thread.
struct OutputFiles {
    paths: [PathBuf; 3],
    files: [std::io::BufWriter<std::fs::File>; 3],
    /// pages.jsonl and duplicates.jsonl are written (`output.jsonl`).
    jsonl: bool,
    warc: Option<WarcWriter>,
    warc_dir: PathBuf,
}

impl OutputFiles {
    const NAMES: [&'static str; 3] = OUTPUT_NAMES;

    /// Opens the outputs, cut back to the last checkpoint's lengths and WARC position.
    fn open(
        dir: &Path,
        output: &OutputConfig,
        lengths: [u64; 3],
        warc_at: WarcPosition,
        payloads: Option<sled::Tree>,
    ) -> Result<OutputFiles, FileError> {
        std::fs::create_dir_all(dir).map_err(|source| FileError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let open_one =
            |i: usize| -> Result<(PathBuf, std::io::BufWriter<std::fs::File>), FileError> {
                let path = dir.join(Self::NAMES[i]);
                let io = |source| FileError::Io {
                    path: path.clone(),
                    source,
                };
                check_not_behind(&path, lengths[i])?;
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .read(true)
                    .write(true)
                    .truncate(false)
                    .open(&path)
                    .map_err(io)?;
                file.set_len(lengths[i]).map_err(io)?;
                file.seek(std::io::SeekFrom::End(0)).map_err(io)?;
                Ok((path.clone(), std::io::BufWriter::new(file)))
            };
        let (p0, f0) = open_one(0)?;
        let (p1, f1) = open_one(1)?;
        let (p2, f2) = open_one(2)?;
        let warc_dir = dir.join("warc");
        let warc = if output.warc {
            check_not_behind(&warc_dir.join(file_name(warc_at.file)), warc_at.length)?;
            Some(
                WarcWriter::open(&warc_dir, output.warc_rotate_bytes, warc_at)
                    .map_err(|source| FileError::Io {
                        path: warc_dir.clone(),
                        source,
                    })?
                    .with_duplicates(output.warc_duplicates),
            )
            .map(|w| match payloads {
                Some(tree) => w.with_payloads(tree),
                None => w,
            })
        } else {
            None
        };
        Ok(OutputFiles {
            paths: [p0, p1, p2],
            files: [f0, f1, f2],
            jsonl: output.jsonl,
            warc,
            warc_dir,
        })
    }

    fn warc(
        &mut self,
        write: impl FnOnce(&mut WarcWriter) -> std::io::Result<()>,
    ) -> Result<(), FileError> {
        match &mut self.warc {
            Some(w) => write(w).map_err(|source| FileError::Io {
                path: self.warc_dir.clone(),
                source,
            }),
            None => Ok(()),
        }
    }

    fn write(&mut self, line: &JsonlLine) -> Result<(), FileError> {
        let which = match line {
            JsonlLine::Page(_) => 0,
            JsonlLine::Duplicate(_) => 1,
            JsonlLine::Failure(_) => 2,
        };
        if which < 2 && !self.jsonl {
            return Ok(());
        }
        let file = &mut self.files[which];
        let written = serde_json::to_writer(&mut *file, line)
            .map_err(std::io::Error::from)
            .and_then(|()| file.write_all(b"\n"));
        written.map_err(|source| FileError::Io {
            path: self.paths[which].clone(),
            source,
        })
    }

    /// Hands what the files gathered to the operating system, without syncing: what a
    /// batch wrote is then visible to readers of the files.
    fn flush(&mut self) -> Result<(), FileError> {
        for (i, file) in self.files.iter_mut().enumerate() {
            file.flush().map_err(|source| FileError::Io {
                path: self.paths[i].clone(),
                source,
            })?;
        }
        self.warc(|w| w.flush())
    }

    /// Carries out one job on the writer thread. After a write error the next jobs are
    /// skipped and the error goes to the next sync.
    fn apply(&mut self, job: OutputJob, failed: &mut Option<FileError>) {
        let result = match job {
            OutputJob::Sync(reply) => {
                let answer = match failed.take() {
                    Some(e) => Err(e),
                    None => self.sync(),
                };
                let _ = reply.send(answer);
                return;
            }
            _ if failed.is_some() => return,
            OutputJob::Line(line) => self.write(&line),
            OutputJob::Response {
                url,
                status,
                content_type,
                body,
            } => self.warc(|w| w.response(&url, status, content_type.as_deref(), &body)),
            OutputJob::Duplicate {
                url,
                status,
                content_type,
                body,
                original,
                original_date,
                distance,
                similarity,
            } => self.warc(|w| {
                w.duplicate(
                    &url,
                    status,
                    content_type.as_deref(),
                    &body,
                    &DuplicateOf {
                        original: &original,
                        original_date,
                        distance,
                        similarity,
                    },
                )
            }),
        };
        if let Err(e) = result {
            *failed = Some(e);
        }
    }

    /// Flushes and syncs every file; returns the JSONL lengths and the WARC position.
    fn sync(&mut self) -> Result<([u64; 3], WarcPosition), FileError> {
        self.flush()?;
        let mut lengths = [0u64; 3];
        for (i, file) in self.files.iter_mut().enumerate() {
            let io = |source| FileError::Io {
                path: self.paths[i].clone(),
                source,
            };
            let inner = file.get_mut();
            inner.sync_data().map_err(io)?;
            lengths[i] = inner.metadata().map_err(io)?.len();
        }
        let warc = match &mut self.warc {
            Some(w) => w.sync().map_err(|source| FileError::Io {
                path: self.warc_dir.clone(),
                source,
            })?,
            None => WarcPosition::default(),
        };
        Ok((lengths, warc))
    }
}

/// The JSONL lengths and WARC position after a sync, or the first write error since the
/// last one.
type SyncAnswer = Result<([u64; 3], WarcPosition), FileError>;

/// One write for the writer thread.
enum OutputJob {
    /// A line of pages.jsonl, duplicates.jsonl or failures.jsonl.
    Line(JsonlLine),
    /// A WARC response record for a stored page.
    Response {
        url: String,
        status: u16,
        content_type: Option<String>,
        body: Bytes,
    },
    /// A WARC record for a duplicate (a revisit, or a response with its own bytes).
    Duplicate {
        url: String,
        status: u16,
        content_type: Option<String>,
        body: Bytes,
        original: String,
        original_date: Option<std::time::SystemTime>,
        distance: Option<u32>,
        similarity: crate::index::Similarity,
    },
    /// Flush and sync everything; answer with the lengths (or the first error).
    Sync(std::sync::mpsc::Sender<SyncAnswer>),
}

/// Batches the writer may hold before the crawl loop waits for it: enough to ride out a
/// burst, few enough that a stalled disk slows the crawl instead of filling memory.
const OUTPUT_QUEUE: usize = 32;

/// Jobs gathered before they go to the writer as one batch: one wake-up of the writer
/// thread per batch instead of one per record.
const OUTPUT_BATCH: usize = 64;

/// The longest a gathered job waits before the batch goes to the writer: output files
/// trail the crawl by at most this much (plus the write itself) when pages come slowly.
const OUTPUT_LATENCY: Duration = Duration::from_millis(50);

/// The crawl loop's handle on the outputs. Serializing JSON and compressing WARC records
/// happen on a thread of their own, so that the loop that decides pages never waits for
/// them. Jobs are gathered into batches; a batch goes to the writer when it is full or
/// [`OUTPUT_LATENCY`] old ([`Outputs::flush_due`], which the loop calls before it waits
/// for work, and wakes up for), and [`Outputs::sync`] (at each checkpoint)
/// waits until everything sent before it is on disk, which keeps the checkpoint's lengths
/// exact. A write error is kept and reported by the next sync, so a checkpoint never
/// records output that was not written.
struct Outputs {
    /// WARC records are written (`output.warc`).
    warc: bool,
    jobs: Option<std::sync::mpsc::SyncSender<Vec<OutputJob>>>,
    /// Jobs not yet handed to the writer.
    batch: Vec<OutputJob>,
    /// When the first of them was gathered.
    batch_started: Option<Instant>,
    thread: Option<std::thread::JoinHandle<()>>,
    out_dir: PathBuf,
}

impl Outputs {
    fn open(
        dir: &Path,
        output: &OutputConfig,
        (lengths, warc_at): ([u64; 3], WarcPosition),
        payloads: Option<sled::Tree>,
    ) -> Result<Outputs, FileError> {
        let mut files = OutputFiles::open(dir, output, lengths, warc_at, payloads)?;
        let (jobs, queue) = std::sync::mpsc::sync_channel::<Vec<OutputJob>>(OUTPUT_QUEUE);
        let thread = std::thread::Builder::new()
            .name("crawldedup-output".into())
            .spawn(move || {
                let mut failed: Option<FileError> = None;
                for batch in queue {
                    for job in batch {
                        files.apply(job, &mut failed);
                    }
                    // The batch reaches the files (readers of pages.jsonl see it).
                    if failed.is_none() {
                        if let Err(e) = files.flush() {
                            failed = Some(e);
                        }
                    }
                }
            })
            .map_err(|source| FileError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        Ok(Outputs {
            warc: output.warc,
            jobs: Some(jobs),
            batch: Vec::with_capacity(OUTPUT_BATCH),
            batch_started: None,
            thread: Some(thread),
            out_dir: dir.to_path_buf(),
        })
    }

    fn gone(&self) -> FileError {
        FileError::Io {
            path: self.out_dir.clone(),
            source: std::io::Error::other("the output thread stopped"),
        }
    }

    fn send(&mut self, job: OutputJob) -> Result<(), FileError> {
        self.batch.push(job);
        self.batch_started.get_or_insert_with(Instant::now);
        if self.batch.len() >= OUTPUT_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// When the open batch is due to go to the writer, if there is one.
    /// Sends the WARC record `job` makes, when WARC records are written.
    fn send_warc(&mut self, job: impl FnOnce() -> OutputJob) -> Result<(), FileError> {
        if self.warc { self.send(job()) } else { Ok(()) }
    }

    fn due_at(&self) -> Option<Instant> {
        self.batch_started.map(|started| started + OUTPUT_LATENCY)
    }

    /// Hands the open batch to the writer thread if it is [`OUTPUT_LATENCY`] old.
    fn flush_due(&mut self) -> Result<(), FileError> {
        match self.due_at() {
            Some(due) if due <= Instant::now() => self.flush(),
            _ => Ok(()),
        }
    }

    /// Hands the open batch to the writer thread.
    fn flush(&mut self) -> Result<(), FileError> {
        self.batch_started = None;
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(OUTPUT_BATCH));
        let jobs = self.jobs.as_ref().ok_or_else(|| self.gone())?;
        jobs.send(batch).map_err(|_| self.gone())
    }

    fn write(&mut self, line: JsonlLine) -> Result<(), FileError> {
        self.send(OutputJob::Line(line))
    }

    fn sync(&mut self) -> SyncAnswer {
        let (reply, answer) = std::sync::mpsc::channel();
        self.send(OutputJob::Sync(reply))?;
        self.flush()?;
        answer.recv().map_err(|_| self.gone())?
    }
}

impl Drop for Outputs {
    fn drop(&mut self) {
        // What is still gathered goes to the writer; closing the queue then ends the
        // thread once it has written what it holds.
        let _ = self.flush();
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The crawl's files as a [`PageSink`]. Nothing is opened until [`PageSink::resume`].
pub struct FileSink {
    dir: PathBuf,
    output: OutputConfig,
    open: Option<Outputs>,
    /// Where the WARC writer keeps the payload digests of what it archived.
    payloads: Option<sled::Tree>,
}

impl FileSink {
    /// The files of `output` in `dir`.
    pub fn new(dir: &Path, output: &OutputConfig) -> FileSink {
        FileSink {
            dir: dir.to_path_buf(),
            output: output.clone(),
            open: None,
            payloads: None,
        }
    }

    /// Keeps the payload digests of the archived responses in `tree` (the crawl's
    /// database), so that a duplicate found in a later run of the crawl (a recrawl) is a
    /// revisit when its bytes are its original's.
    #[cfg_attr(not(feature = "crawler"), allow(dead_code))]
    pub(crate) fn with_payloads(mut self, tree: sled::Tree) -> FileSink {
        self.payloads = Some(tree);
        self
    }

    /// The position of JSONL lengths `lengths` and WARC position `warc`.
    pub fn position(lengths: [u64; 3], warc: WarcPosition) -> SinkPosition {
        SinkPosition(vec![
            lengths[0],
            lengths[1],
            lengths[2],
            warc.file,
            warc.length,
        ])
    }

    /// The JSONL lengths and WARC position of a position made by [`FileSink::position`].
    pub fn lengths(at: &SinkPosition) -> Result<([u64; 3], WarcPosition), SinkError> {
        match at.0[..] {
            [a, b, c, file, length] => Ok(([a, b, c], WarcPosition { file, length })),
            _ => Err(format!("not a position of the crawl's files: {:?}", at.0).into()),
        }
    }

    fn outputs(&mut self) -> Result<&mut Outputs, SinkError> {
        match &mut self.open {
            Some(outputs) => Ok(outputs),
            None => Err("the crawl's files were used before resume".into()),
        }
    }
}

fn boxed(e: FileError) -> SinkError {
    Box::new(e)
}

impl PageSink for FileSink {
    fn page(&mut self, page: &StoredPage) -> Result<(), SinkError> {
        let outputs = self.outputs()?;
        let final_url = page.final_url.to_string();
        outputs
            .write(JsonlLine::Page(Box::new(PageLine {
                url: page.url.to_string(),
                final_url: final_url.clone(),
                status: page.status,
                fetched_at: page.fetched_at,
                depth: page.depth,
                title: page.title.clone(),
                language: page.language.clone(),
                simhash: page.simhash,
                digest: page.digest,
                id: page.id,
                nearest_similarity: page.nearest.map(|n| crate::index::round3(n.resemblance)),
                bytes: page.body.len(),
                previous: page.previous.map(|p| PreviousLine {
                    id: p.id,
                    digest: p.digest,
                    fetched_at: p.fetched_at,
                }),
                text: page.text.clone(),
                redirects: page.redirects.iter().map(Url::to_string).collect(),
            })))
            .map_err(boxed)?;
        outputs
            .send_warc(|| OutputJob::Response {
                url: final_url,
                status: page.status,
                content_type: page.content_type.clone(),
                body: page.body.clone(),
            })
            .map_err(boxed)
    }

    fn duplicate(&mut self, duplicate: &DuplicatePage) -> Result<(), SinkError> {
        let outputs = self.outputs()?;
        let final_url = duplicate.final_url.to_string();
        outputs
            .write(JsonlLine::Duplicate(DuplicateLine {
                url: duplicate.url.to_string(),
                final_url: final_url.clone(),
                fetched_at: duplicate.fetched_at,
                kind: if duplicate.distance.is_some() {
                    "near"
                } else {
                    "exact"
                },
                verdict: if duplicate.distance.is_some() {
                    "near_duplicate"
                } else {
                    "exact_duplicate"
                },
                of: duplicate.of.clone(),
                distance: duplicate.distance.unwrap_or(0),
                similarity: crate::index::round3(duplicate.similarity.resemblance),
                containment: crate::index::round3(duplicate.similarity.containment),
                depth: duplicate.depth,
                of_fetched_at: duplicate.of_fetched_at,
            }))
            .map_err(boxed)?;
        outputs
            .send_warc(|| OutputJob::Duplicate {
                url: final_url,
                status: duplicate.status,
                content_type: duplicate.content_type.clone(),
                body: duplicate.body.clone(),
                original: duplicate.of.clone(),
                original_date: duplicate.of_fetched_at,
                distance: duplicate.distance,
                similarity: duplicate.similarity,
            })
            .map_err(boxed)
    }

    fn failure(&mut self, failure: &FailedPage) -> Result<(), SinkError> {
        self.outputs()?
            .write(JsonlLine::Failure(FailureLine {
                url: failure.url.to_string(),
                kind: failure.kind.clone(),
                reason: failure.reason.clone(),
                status: failure.status,
                attempts: failure.attempts,
                depth: failure.depth,
            }))
            .map_err(boxed)
    }

    fn checkpoint(&mut self) -> Result<SinkPosition, SinkError> {
        let (lengths, warc) = self.outputs()?.sync().map_err(boxed)?;
        Ok(FileSink::position(lengths, warc))
    }

    fn resume(&mut self, at: Option<&SinkPosition>) -> Result<(), SinkError> {
        let (lengths, warc) = match at {
            Some(at) => FileSink::lengths(at)?,
            None => ([0; 3], WarcPosition::default()),
        };
        self.open = Some(
            Outputs::open(
                &self.dir,
                &self.output,
                (lengths, warc),
                self.payloads.clone(),
            )
            .map_err(boxed)?,
        );
        Ok(())
    }

    fn idle(&mut self) -> Result<Option<Instant>, SinkError> {
        let outputs = self.outputs()?;
        outputs.flush_due().map_err(boxed)?;
        Ok(outputs.due_at())
    }
}
