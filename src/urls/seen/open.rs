//! Opening a filter: new, or from the file a checkpoint saved (with the journal of URLs
//! answered new since replayed), and saving it.

use super::*;

impl SeenUrls {
    /// As [`SeenUrls::open`], and every URL recorded as new is also appended to the URL
    /// journal ([`crate::urls::journal`]), so that [`SeenUrls::sync`] can make answers
    /// durable between saves. For callers that answer to someone else (the sidecar); a
    /// crawl that rolls its frontier back to a checkpoint must not use it, since the
    /// filter would then remember URLs that the frontier forgot.
    pub fn open_journaled(state_dir: &Path, config: SeenConfig) -> Result<SeenUrls, SeenError> {
        SeenUrls::open_in(state_dir, config, true, 0)
    }

    /// Opens the filter saved in `state_dir`, or starts an empty one there. A saved filter
    /// keeps the layout it was created with; a different `config` sizing only applies to
    /// new state directories. A saved filter whose expiry (recrawl interval and
    /// generations) differs from `config`'s is refused: its generations cover other slices.
    ///
    /// Journal generations left by a journaled run ([`SeenUrls::open_journaled`]) are
    /// replayed either way: their URLs were answered as new.
    pub fn open(state_dir: &Path, config: SeenConfig) -> Result<SeenUrls, SeenError> {
        SeenUrls::open_in(state_dir, config, false, 0)
    }

    /// [`SeenUrls::open`] or [`SeenUrls::open_journaled`] in a state directory whose
    /// ledger names it `state_id` (the id goes into every file written).
    pub(crate) fn open_in(
        state_dir: &Path,
        config: SeenConfig,
        journaled: bool,
        state_id: crate::state_id::StateId,
    ) -> Result<SeenUrls, SeenError> {
        config.first_layer()?;
        let confirm = if config.confirm_on_disk {
            let path = state_dir.join(CONFIRM_DIR);
            let db = crate::db::open(&sled::Config::new().path(&path).cache_capacity(64 << 20))
                .map_err(|source| SeenError::Store {
                    path: path.clone(),
                    source: crate::db::error(source),
                })?;
            Some(ConfirmStore { path, db })
        } else {
            None
        };
        let file = state_dir.join(SEEN_FILE);
        let seen = match fs::read(&file) {
            Ok(bytes) => {
                let saved = decode(&bytes).map_err(|problem| SeenError::Corrupt {
                    path: file.clone(),
                    problem,
                })?;
                let wanted = match config.expire_after {
                    Some(_) => (
                        config.slice_ms().unwrap_or(0),
                        config.generations,
                        config.interval_ms(),
                    ),
                    None => (0, 0, None),
                };
                // A version-2 file knows its slices, not the interval they were cut from.
                let saved_interval = saved.interval_ms.filter(|&ms| ms > 0).or(wanted.2);
                if (saved.slice_ms, saved.generations, saved_interval) != wanted {
                    let interval = saved
                        .interval_ms
                        .filter(|&ms| ms > 0)
                        .unwrap_or(saved.slice_ms * u64::from(saved.generations));
                    return Err(SeenError::Params(format!(
                        "{}: saved with {}, the configuration asks for {}: set \
                         url_filter.recrawl_after and recrawl_generations back, or start a \
                         new state directory",
                        file.display(),
                        describe_expiry(interval, saved.generations),
                        describe_expiry(wanted.2.unwrap_or(0), wanted.1)
                    )));
                }
                let mut seen =
                    SeenUrls::assemble(config, saved.generations_list, confirm, saved.seq);
                seen.expired.store(saved.expired, Ordering::Relaxed);
                seen.state_id = state_id;
                seen
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => SeenUrls {
                state_id,
                ..SeenUrls::assemble(config, Vec::new(), confirm, 0)
            },
            Err(source) => return Err(SeenError::Io { path: file, source }),
        };
        seen.replay(state_dir, journaled)
    }

    /// Re-records the URLs of the journal generations at or after the saved filter's
    /// sequence, deletes older ones, and starts the journal when `journaled`.
    pub(super) fn replay(
        mut self,
        state_dir: &Path,
        journaled: bool,
    ) -> Result<SeenUrls, SeenError> {
        let saved = self.checkpoint_seq();
        let generations = journal::read_all(state_dir)
            .map_err(|(path, problem)| SeenError::Corrupt { path, problem })?;
        let live: Vec<_> = generations.into_iter().filter(|g| g.seq >= saved).collect();
        for generation in &live {
            for entry in &generation.entries {
                // Into the generation of its slice: if that slice has expired meanwhile,
                // the URL is forgotten as it would have been without the crash.
                self.record_new(entry.hash, entry.slice)?;
                self.confirm_insert(entry.hash128, entry.slice)?;
            }
        }
        let seq = live.last().map_or(saved, |g| g.seq.max(saved));
        self.checkpoint_seq.store(seq, Ordering::Relaxed);
        let io_error = |source| SeenError::Io {
            path: state_dir.to_path_buf(),
            source,
        };
        journal::remove_before(state_dir, saved).map_err(io_error)?;
        if journaled {
            let journal = match live.last() {
                Some(last) => Journal::resume(state_dir, last, self.state_id),
                None => Journal::create(state_dir, seq, self.state_id),
            };
            self.journal = Some(journal.map_err(io_error)?);
        }
        Ok(self)
    }

    pub(super) fn assemble(
        config: SeenConfig,
        generations: Vec<Generation>,
        confirm: Option<ConfirmStore>,
        seq: u64,
    ) -> SeenUrls {
        SeenUrls {
            config,
            generations: RwLock::new(generations),
            stripes: (0..LOCK_STRIPES).map(|_| Mutex::new(())).collect(),
            confirm,
            journal: None,
            checkpoint_seq: AtomicU64::new(seq),
            clock: crate::clock::system(),
            expired: AtomicU64::new(0),
            state_id: 0,
        }
    }

    /// Saves the filter into `state_dir` atomically (temporary file, fsync, rename, fsync of
    /// the folder), tagged with checkpoint sequence number `seq`. URLs inserted while the
    /// save runs may or may not be in the saved copy; a caller that needs "exactly the URLs
    /// after the checkpoint" records them with sequence numbers above `seq` and re-inserts
    /// those on open. Generations that expired are not saved.
    pub fn save(&self, state_dir: &Path, seq: u64) -> Result<(), SeenError> {
        if let Some(store) = &self.confirm {
            store.db.flush().map_err(|source| SeenError::Store {
                path: store.path.clone(),
                source: crate::db::error(source),
            })?;
        }
        let bytes = {
            // The write lock stops inserts for the copy, so the counts match the bits, and
            // the journal switches generation at the same point.
            let mut generations = write(&self.generations);
            self.drop_expired(&mut generations, self.current_slice());
            if let Some(journal) = &self.journal {
                journal.rotate(seq).map_err(|source| SeenError::Io {
                    path: journal::path_of(state_dir, seq),
                    source,
                })?;
            }
            let (slices, g) = match self.config.expire_after {
                Some(_) => (
                    (
                        self.config.slice_ms().unwrap_or(0),
                        self.config.interval_ms().unwrap_or(0),
                    ),
                    self.config.generations,
                ),
                None => ((0, 0), 0),
            };
            encode(
                self.state_id,
                seq,
                slices,
                g,
                self.expired.load(Ordering::Relaxed),
                &generations,
            )
        };
        let path = state_dir.join(SEEN_FILE);
        write_atomically(&path, &bytes).map_err(|source| SeenError::Io { path, source })?;
        self.checkpoint_seq.store(seq, Ordering::Relaxed);
        journal::remove_before(state_dir, seq).map_err(|source| SeenError::Io {
            path: state_dir.to_path_buf(),
            source,
        })?;
        Ok(())
    }
}

pub(super) fn describe_expiry(interval_ms: u64, generations: u32) -> String {
    if generations == 0 {
        "no recrawl interval".to_string()
    } else {
        format!(
            "a recrawl interval of {} in {generations} generations",
            humantime::format_duration(std::time::Duration::from_millis(interval_ms))
        )
    }
}
