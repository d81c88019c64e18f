//! The template evaluation's command line (see the example's documentation).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use super::cjk;

/// The command line (see the example's documentation).
pub struct Args {
    pub dataset: PathBuf,
    pub python: Option<String>,
    pub limit: usize,
    pub verbose: bool,
    pub boilerplate_set: Option<PathBuf>,
    pub dump: Option<PathBuf>,
    pub cjk_pages: Option<usize>,
    pub as_files: Option<String>,
    /// More sites for the CJK evaluation (`--site HOST=FOLDER`): a folder of one site's
    /// pages as served (a saved crawl, a web cache).
    pub sites: Vec<cjk::Site>,
    /// `--into-first-paragraph`: a CJK site page's new text in its first paragraph of its
    /// own rather than its longest (templates/cjk.rs).
    pub first_paragraph: bool,
}

pub fn parse_args() -> Result<Args> {
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        dataset: PathBuf::from("../shared/datasets/wcxb-dev"),
        python: None,
        limit: usize::MAX,
        verbose: false,
        boilerplate_set: None,
        dump: None,
        cjk_pages: None,
        as_files: None,
        sites: Vec::new(),
        first_paragraph: false,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--cjk" => {
                parsed.cjk_pages = Some(
                    args.next()
                        .context("--cjk needs N, the pages of each site")?
                        .parse()?,
                )
            }
            "--dump" => {
                parsed.dump = Some(PathBuf::from(args.next().context("--dump needs a folder")?))
            }
            "--boilerplate-set" => {
                parsed.boilerplate_set = Some(PathBuf::from(
                    args.next().context("--boilerplate-set needs a folder")?,
                ));
            }
            "--site" => {
                let spec = args.next().context("--site needs HOST=FOLDER")?;
                let (host, folder) = spec.split_once('=').context("--site needs HOST=FOLDER")?;
                parsed.sites.push(cjk::Site::of_folder(host, folder)?);
            }
            "--as-files" => {
                parsed.as_files = Some(args.next().context("--as-files needs a binary")?)
            }
            "--peer" => parsed.python = Some(args.next().context("--peer needs a python")?),
            "--verbose" => parsed.verbose = true,
            "--into-first-paragraph" => parsed.first_paragraph = true,
            "--limit" => parsed.limit = args.next().context("--limit needs N")?.parse()?,
            other if !other.starts_with('-') => parsed.dataset = PathBuf::from(other),
            other => bail!("unknown option {other}"),
        }
    }
    Ok(parsed)
}
