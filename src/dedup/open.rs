//! Opening the stage on a state directory: the memory its settings need, the ledger's
//! check of the parts, the parts themselves, and the ledger raised as the stage goes.

use std::path::Path;
use std::sync::atomic::AtomicU64;

use super::{Counters, Dedup, DedupError, INDEX_DIR, index_config, memory};
use crate::config::Config;
use crate::index::SimhashIndex;
use crate::ledger::{Ledger, StateKind};
use crate::urls::{Canonicalizer, SeenUrls};

/// How a program opens the stage on a state directory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opening {
    /// The program opening it.
    pub(crate) kind: StateKind,
    /// Open a directory of another kind, keeping every document of both.
    pub(crate) share: bool,
    /// Journal the URLs answered new (see [`Dedup::open`]).
    pub(crate) journaled: bool,
    /// A crawl's own: the documents its last checkpoint recorded (0 for a new crawl). The
    /// other programs read it from the crawl database when they need it.
    pub(crate) crawl_checkpoint: Option<u64>,
}

impl Opening {
    /// A program that is not a crawl.
    pub(crate) fn stage(kind: StateKind, share: bool, journaled: bool) -> Opening {
        Opening {
            kind,
            share,
            journaled,
            crawl_checkpoint: None,
        }
    }
}

impl Dedup {
    pub(crate) fn open_with(
        state_dir: &Path,
        config: &Config,
        opening: Opening,
    ) -> Result<Dedup, DedupError> {
        let journaled = opening.journaled;
        // Before anything is created: a setting the machine cannot hold is refused first.
        memory::check(state_dir, config)?;
        crate::db::create_state_dir(state_dir).map_err(|source| DedupError::StateDir {
            path: state_dir.to_path_buf(),
            source,
        })?;
        let ledger = crate::ledger::open(state_dir).map_err(|e| match e {
            // Writing a new ledger failed: an I/O error, not a damaged directory.
            crate::ledger::LedgerError::Io { path, source } => {
                DedupError::StateDir { path, source }
            }
            other => DedupError::Damaged {
                path: state_dir.to_path_buf(),
                problem: other.to_string(),
            },
        })?;
        let ledger = crate::ledger::claim(state_dir, ledger, opening.kind, opening.share)
            .map_err(|e| DedupError::OtherKind(e.to_string()))?;
        let index_documents = kept_documents(state_dir, &ledger, opening)?;
        if ledger.journal && !journaled {
            // Opened without the journal: its generations are no longer kept up, so the
            // ledger stops asking for one before the next save drops them.
            write_ledger(
                state_dir,
                &Ledger {
                    journal: false,
                    ..ledger
                },
            )?;
        }
        let seen = SeenUrls::open_in(
            state_dir,
            config.url_filter.seen_config(),
            journaled,
            ledger.id,
        )?;
        let mut index = SimhashIndex::open_at(
            &state_dir.join(INDEX_DIR),
            index_config(config),
            index_documents,
        )?;
        index.belong_to(ledger.id)?;
        // What now exists: the index, and the journal's first generation if journaled.
        // Written before any document is added: a crawl's documents from here on are its
        // own until a checkpoint records them; another program's are settled as it goes.
        let ledger = Ledger {
            journal: journaled,
            index: Some(ledger.index.unwrap_or(0)),
            unsettled: (opening.kind == StateKind::Crawl).then(|| index.len()),
            ..ledger
        };
        write_ledger(state_dir, &ledger)?;
        let templates = if config.dedup.host_templates {
            Some(
                super::template::HostTemplates::open(state_dir).map_err(|problem| {
                    DedupError::Damaged {
                        path: state_dir.to_path_buf(),
                        problem: format!(
                            "host templates: {problem}; `crawldedup repair` sets the file aside \
                             (the templates are learned again)"
                        ),
                    }
                })?,
            )
        } else {
            None
        };
        let seq = seen.checkpoint_seq();
        Ok(Dedup {
            state_dir: state_dir.to_path_buf(),
            canonicalizer: Canonicalizer::new(config.url_filter.canonical_options()),
            seen,
            index,
            counters: Counters::default(),
            checkpoint_seq: AtomicU64::new(seq),
            ledger: std::sync::Mutex::new(ledger),
            templates,
            store_template_text: config.dedup.store_template_text,
        })
    }

    /// Raises the ledger's bounds to what is durable now: the URL filter's last save,
    /// `index_documents`, and a crawl's committed checkpoint `crawl` (see
    /// [`crate::ledger`]). Called after the parts are durable, never before.
    pub(crate) fn raise_ledger(
        &self,
        index_documents: u64,
        crawl: Option<u64>,
    ) -> Result<(), DedupError> {
        let mut ledger = self
            .ledger
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let raised = Ledger {
            url_filter: ledger.url_filter.max(self.seen.checkpoint_seq()),
            index: Some(ledger.index.unwrap_or(0).max(index_documents)),
            crawl: crawl
                .map(|c| ledger.crawl.unwrap_or(0).max(c))
                .or(ledger.crawl),
            // A crawl's checkpoint settles what it recorded.
            unsettled: match crawl {
                Some(_) => Some(ledger.unsettled.unwrap_or(0).max(index_documents)),
                None => ledger.unsettled,
            },
            ..*ledger
        };
        if raised != *ledger {
            write_ledger(&self.state_dir, &raised)?;
            *ledger = raised;
        }
        Ok(())
    }

    /// The state directory's id, written in its ledger and into every part.
    pub fn state_id(&self) -> crate::ledger::StateId {
        self.ledger
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .id
    }
}

fn write_ledger(state_dir: &Path, ledger: &Ledger) -> Result<(), DedupError> {
    ledger
        .write(state_dir)
        .map_err(|source| DedupError::StateDir {
            path: state_dir.join(crate::ledger::LEDGER_FILE),
            source,
        })
}

/// How many of the index's documents this open keeps (`None`: all of them). A crawl's
/// documents past both its last checkpoint and the ledger's `unsettled` count are its own
/// work since that checkpoint, which it decides again on resume: every open drops them,
/// the crawl's own and another program's (which reads the checkpoint from the crawl
/// database). See [`crate::ledger::StateKind`].
fn kept_documents(
    state_dir: &Path,
    ledger: &Ledger,
    opening: Opening,
) -> Result<Option<u64>, DedupError> {
    let Some(unsettled) = ledger.unsettled else {
        return Ok(None);
    };
    let checkpoint = match opening.crawl_checkpoint {
        Some(documents) => documents,
        None => crate::ledger::crawl_checkpoint_documents(state_dir).map_err(|problem| {
            DedupError::OtherKind(format!("{}: {problem}", state_dir.display()))
        })?,
    };
    Ok(Some(unsettled.max(checkpoint)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PageVerdict;

    fn texts() -> (String, String) {
        let site = crate::fixture::Site::new(11, 2);
        let text = |i: usize| site.articles()[i].paragraphs.join("\n\n");
        (text(0), text(1))
    }

    fn crawl(dir: &Path, checkpoint: u64) -> Dedup {
        Dedup::open_at(dir, &Config::default(), checkpoint, false).unwrap()
    }

    fn shared(dir: &Path) -> Dedup {
        Dedup::builder().share_state(true).open(dir).unwrap()
    }

    /// A crawl killed after a page became durable in its index, before a checkpoint
    /// recorded it; then another program sharing the directory; then the crawl resumed. The
    /// crawl decides its page again and stores it (it is not taken for a copy of itself),
    /// and the other program's page stays.
    #[test]
    fn a_shared_directory_drops_a_killed_crawl_s_own_work_and_keeps_the_other_program_s() {
        let dir = tempfile::tempdir().unwrap();
        let (crawls, other) = texts();
        let first = crawl(dir.path(), 0);
        assert!(matches!(
            first.check_text("crawl page", &crawls).unwrap(),
            PageVerdict::Unique { .. }
        ));
        // Durable, as sled makes it on its own, but no crawl checkpoint recorded it.
        first.checkpoint().unwrap();
        drop(first);

        let stage = shared(dir.path());
        assert_eq!(
            stage.stats().indexed_documents,
            0,
            "the crawl's own work kept"
        );
        assert!(matches!(
            stage.check_text("other page", &other).unwrap(),
            PageVerdict::Unique { .. }
        ));
        stage.close().unwrap();

        let resumed = crawl(dir.path(), 0);
        assert!(
            matches!(
                resumed.check_text("crawl page", &crawls).unwrap(),
                PageVerdict::Unique { .. }
            ),
            "the crawl's page, fetched again, was taken for a copy of itself"
        );
        assert!(
            resumed
                .check_text("other page again", &other)
                .unwrap()
                .duplicate()
                .is_some(),
            "the other program's page was rolled back"
        );
    }

    /// Without sharing, a crawl's directory is refused to another program, and a sidecar's
    /// to a crawl, each in one line naming both; nothing is changed.
    #[test]
    fn another_program_s_directory_is_refused_without_sharing() {
        let dir = tempfile::tempdir().unwrap();
        crawl(dir.path(), 0).close().unwrap();
        let ledger = std::fs::read(dir.path().join(crate::ledger::LEDGER_FILE)).unwrap();
        let Err(DedupError::OtherKind(line)) = Dedup::open(dir.path(), &Config::default()) else {
            panic!("a crawl's directory opened by the library");
        };
        assert!(line.contains("a crawl's"), "{line}");
        assert_eq!(
            std::fs::read(dir.path().join(crate::ledger::LEDGER_FILE)).unwrap(),
            ledger
        );

        let sidecar = tempfile::tempdir().unwrap();
        Dedup::builder()
            .kind(StateKind::Sidecar)
            .open(sidecar.path())
            .unwrap()
            .close()
            .unwrap();
        let Err(DedupError::OtherKind(line)) =
            Dedup::open_at(sidecar.path(), &Config::default(), 0, false)
        else {
            panic!("a sidecar's directory opened by a crawl");
        };
        assert!(
            line.contains("a sidecar's") && line.contains("a crawl's"),
            "{line}"
        );
    }
}
