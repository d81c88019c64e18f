//! `crawldedup repair`: what can be mended from what is intact (see the [parent
//! module](super)).

use std::path::{Path, PathBuf};

use super::{OUTPUTS, Part, ledger_id, set_aside_path, verify_with_record};
use crate::config::Config;
use crate::dedup::INDEX_DIR;
use crate::index::{IndexConfig, SimhashIndex};
use crate::urls::seen::SEEN_FILE;
use crate::urls::{Canonicalizer, SeenUrls};

/// Why `repair` must not start on `state_dir`: a process holds it, or it cannot be written.
pub fn cannot_repair(state_dir: &Path) -> Option<String> {
    if let Some(holder) = super::in_use(state_dir) {
        return Some(format!("{holder}; stop it first; nothing was changed"));
    }
    (!crate::db::writable(state_dir)).then(|| {
        "read-only: repair writes; copy the directory somewhere writable and repair the copy; \
         nothing was changed"
            .into()
    })
}

/// Mends what can be mended (see the module doc); one [`Part`] per action taken or refused.
///
/// `config` sizes a rebuilt URL filter (its `[url_filter]` section, as for a new state
/// directory) and canonicalizes the page names it is rebuilt from.
pub fn repair(
    state_dir: &Path,
    out_dir: Option<&Path>,
    accept_loss: bool,
    config: &Config,
) -> Vec<Part> {
    let mut done = Vec::new();
    let super::Found {
        parts: found,
        outputs_at,
        unsent,
    } = verify_with_record(state_dir, out_dir);
    for part in &found {
        let Err(problem) = &part.result else {
            continue;
        };
        let result = match part.name {
            "ledger" if accept_loss => crate::ledger::adopt(state_dir)
                .map(|l| format!("written for the parts as they are: {l}"))
                .map_err(|e| e.to_string()),
            "URL filter" if crawl_here(state_dir) || accept_loss => {
                rebuild_url_filter(state_dir, config)
            }
            "URL journal" if accept_loss => set_aside_journal(state_dir),
            // A summary of pages seen, not an answer: learned again, nothing lost.
            "host templates" => set_aside_templates(state_dir),
            "index" if accept_loss && index_lost(problem) => set_aside_index(state_dir),
            "index" if accept_loss => SimhashIndex::rewrite_manifest(&state_dir.join(INDEX_DIR))
                .map(|(held, old)| match old {
                    Some(old) if old > held => format!(
                        "manifest rewritten for the {held} documents the database holds ({} lost)",
                        old - held
                    ),
                    _ => format!("manifest rewritten for the {held} documents the database holds"),
                })
                .map_err(|e| format!("could not recover: {e}")),
            "ledger" | "URL filter" | "URL journal" | "index" => Err(format!(
                "{problem}; `repair --accept-loss` would {}",
                match part.name {
                    "ledger" => {
                        "write a ledger for the parts as they are (a part lost with it is not \
                         noticed)"
                    }
                    "index" if index_lost(problem) => {
                        "set what is left of it aside and start an empty index (every page it \
                         held is forgotten)"
                    }
                    "index" => "accept the documents the database still holds",
                    "URL journal" => {
                        "set the generation aside (its URLs are fetched again, their pages \
                         found as duplicates)"
                    }
                    _ => {
                        "set the file aside and rebuild the filter from the URLs of the stored \
                         pages (URLs answered `new` that did not become pages are forgotten)"
                    }
                }
            )),
            _ => Err(format!("could not recover: {problem}")),
        };
        done.push(Part {
            name: part.name,
            result,
        });
    }
    if let Some(unsent) = unsent {
        done.push(hand_over(state_dir, out_dir, config, &unsent));
    }
    // Once every part is mended or accepted, the ledger describes them as they are.
    if !done.is_empty() && done.iter().all(|p| p.result.is_ok()) {
        if let Err(problem) = crate::ledger::adopt(state_dir) {
            done.push(Part {
                name: "ledger",
                result: Err(problem.to_string()),
            });
        }
    }
    if let (Some(at), Some(out)) = (&outputs_at, out_dir) {
        if let Some(cut) = cut_outputs_back(out, &at.output_bytes) {
            done.push(Part {
                name: "outputs",
                result: cut,
            });
        }
    }
    if done.is_empty() {
        done.push(Part {
            name: "state directory",
            result: Ok("nothing to repair".into()),
        });
    }
    done
}

/// Renames a damaged host-template file to `host-templates.damaged`; the templates are
/// learned again from the pages that come.
fn set_aside_templates(state_dir: &Path) -> Result<String, String> {
    let path = state_dir.join(crate::dedup::template::TEMPLATES_FILE);
    let aside = PathBuf::from(format!("{}.damaged", path.display()));
    std::fs::rename(&path, &aside)
        .map_err(|e| format!("could not set {} aside: {e}", path.display()))?;
    Ok(format!(
        "set aside as {}; learned again from the next pages (nothing answered is lost)",
        aside.display()
    ))
}

/// Whether the index's problem is that it is gone or another directory's (rather than
/// holding fewer documents than recorded).
fn index_lost(problem: &str) -> bool {
    problem.starts_with("missing") || problem.starts_with("belongs to another")
}

/// Renames what is left of the index to `index.damaged` (never deletes it); the next open
/// starts an empty one.
fn set_aside_index(state_dir: &Path) -> Result<String, String> {
    let dir = state_dir.join(INDEX_DIR);
    let aside = state_dir.join(format!("{INDEX_DIR}.damaged"));
    if !dir.exists() {
        return Ok(
            "none left; the next open starts an empty index (its pages are forgotten)".into(),
        );
    }
    if aside.exists() {
        return Err(format!(
            "could not set {} aside: {} already exists (move it away first)",
            dir.display(),
            aside.display()
        ));
    }
    std::fs::rename(&dir, &aside)
        .map_err(|e| format!("could not set {} aside: {e}", dir.display()))?;
    Ok(format!(
        "set aside as {}; the next open starts an empty index (its pages are forgotten)",
        aside.display()
    ))
}

/// Whether `state_dir` holds a crawl (its database).
fn crawl_here(state_dir: &Path) -> bool {
    state_dir.join(crate::crawl::CRAWL_DB).exists()
}

/// Rebuilds a damaged or missing URL filter from the stored records, after setting the
/// damaged file aside (renamed, never deleted): a crawl's from its frontier, which holds
/// every URL the filter recorded up to the last checkpoint (nothing is lost); another
/// state directory's from the names of the pages its index holds (the URLs answered `new`
/// that never became pages are lost, so only with `--accept-loss`). Journal generations
/// are kept and replayed on the next open.
fn rebuild_url_filter(state_dir: &Path, config: &Config) -> Result<String, String> {
    let path = state_dir.join(SEEN_FILE);
    let aside = set_aside_path(state_dir);
    if path.exists() && aside.exists() {
        return Err(format!(
            "could not set {} aside: {} already exists (move it away first)",
            path.display(),
            aside.display()
        ));
    }
    let seen = SeenUrls::new(config.url_filter.seen_config())
        .map_err(|e| e.to_string())?
        .with_state_id(ledger_id(state_dir).unwrap_or(0));
    let mut urls = 0u64;
    let mut record = |url: &str| -> Result<(), String> {
        seen.insert(url).map_err(|e| e.to_string())?;
        urls += 1;
        Ok(())
    };
    let (seq, from) = if crawl_here(state_dir) {
        let seq = crate::crawl::each_frontier_url(state_dir, &mut record)
            .map_err(|e| format!("could not rebuild from the frontier: {e}"))?;
        (seq, "the crawl's frontier")
    } else {
        let canonicalizer = Canonicalizer::new(config.url_filter.canonical_options());
        let dir = state_dir.join(INDEX_DIR);
        if dir.exists() {
            let index = SimhashIndex::open(&dir, IndexConfig::default())
                .map_err(|e| format!("could not rebuild from the index: {e}"))?;
            for id in 0..index.len() {
                let name = index
                    .get(id)
                    .map_err(|e| format!("could not rebuild from the index: {e}"))?
                    .map(|r| r.name)
                    .unwrap_or_default();
                if let Ok(url) = canonicalizer.canonicalize(&name) {
                    record(url.as_str())?;
                }
            }
        }
        // Below every journal generation left, so that all of them are replayed.
        let oldest = crate::urls::journal::read_all(state_dir)
            .map_err(|(path, problem)| format!("{}: {problem}", path.display()))?
            .first()
            .map_or(0, |g| g.seq);
        (oldest, "the pages in the index")
    };
    let moved = if path.exists() {
        std::fs::rename(&path, &aside)
            .map_err(|e| format!("could not set {} aside: {e}", path.display()))?;
        format!("; the damaged file set aside as {}", aside.display())
    } else {
        String::new()
    };
    seen.save(state_dir, seq).map_err(|e| e.to_string())?;
    Ok(format!(
        "rebuilt from the {urls} URLs of {from}, saved at checkpoint {seq}{moved}"
    ))
}

/// Renames each damaged URL journal generation, and each of another state directory, to
/// `NAME.damaged` (never deletes it).
fn set_aside_journal(state_dir: &Path) -> Result<String, String> {
    let own = ledger_id(state_dir);
    let mut moved = Vec::new();
    loop {
        let next = match crate::urls::journal::read_all(state_dir) {
            Err((path, _)) => path,
            Ok(_) => match crate::urls::journal::read_headers(state_dir)
                .into_iter()
                .find(|(_, id)| matches!((id, own), (Ok(id), Some(own)) if *id != 0 && *id != own))
            {
                Some((seq, _)) => crate::urls::journal::path_of(state_dir, seq),
                None => break,
            },
        };
        let aside = PathBuf::from(format!("{}.damaged", next.display()));
        if aside.exists() || moved.contains(&aside) {
            return Err(format!(
                "could not set {} aside: {} already exists (move it away first)",
                next.display(),
                aside.display()
            ));
        }
        std::fs::rename(&next, &aside)
            .map_err(|e| format!("could not set {} aside: {e}", next.display()))?;
        moved.push(aside);
    }
    let forgotten = "the URLs it held are fetched again, their pages found as duplicates";
    if moved.is_empty() {
        return Ok(format!("accepted as lost: {forgotten}"));
    }
    Ok(format!(
        "set aside as {}; {forgotten}",
        moved
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// A cluster worker's hand-over left unsent: settled with the cluster when the
/// configuration names it (`repair --cluster`), else said again with what to do.
fn hand_over(
    state_dir: &Path,
    out_dir: Option<&Path>,
    config: &Config,
    unsent: &crate::crawl::Unsent,
) -> Part {
    #[cfg(feature = "cluster")]
    let result = match config.cluster.enabled() {
        true => super::hand_over::settle(state_dir, out_dir, config, unsent),
        false => Ok(super::unsent_note(unsent)),
    };
    #[cfg(not(feature = "cluster"))]
    let result = {
        let _ = (state_dir, out_dir, config);
        Ok(super::unsent_note(unsent))
    };
    Part {
        name: "cluster hand-over",
        result,
    }
}

/// Cuts the JSONL outputs in `out` that run past `lengths` (a checkpoint's) back to them;
/// `None` when none do.
pub(super) fn cut_outputs_back(out: &Path, lengths: &[u64; 3]) -> Option<Result<String, String>> {
    let mut cut = Vec::new();
    for (name, &expected) in OUTPUTS.iter().zip(lengths) {
        let path = out.join(name);
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.len() > expected {
            let result = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_len(expected).and_then(|()| f.sync_all()));
            if let Err(e) = result {
                return Some(Err(format!("could not cut {} back: {e}", path.display())));
            }
            cut.push(format!(
                "{name} cut back by {} bytes",
                meta.len() - expected
            ));
        }
    }
    (!cut.is_empty()).then(|| Ok(cut.join("; ")))
}
