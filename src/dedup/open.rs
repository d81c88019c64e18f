//! Opening the stage on a state directory: the memory its settings need, the ledger's
//! check of the parts, the parts themselves, and the ledger raised as the stage goes.

use std::path::Path;
use std::sync::atomic::AtomicU64;

use super::{Counters, Dedup, DedupError, INDEX_DIR, index_config, memory};
use crate::config::Config;
use crate::index::SimhashIndex;
use crate::ledger::Ledger;
use crate::urls::{Canonicalizer, SeenUrls};

impl Dedup {
    pub(super) fn open_with(
        state_dir: &Path,
        config: &Config,
        index_documents: Option<u64>,
        journaled: bool,
    ) -> Result<Dedup, DedupError> {
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
        let ledger = Ledger {
            journal: journaled,
            index: Some(ledger.index.unwrap_or(0)),
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
