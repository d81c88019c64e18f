//! Seed lists: one URL per line, blank lines and `#` comments skipped.

use std::path::Path;

use super::ConfigError;

/// Reads a seed file: one URL per line; blank lines and `#` comments are skipped.
pub fn read_seed_file(path: &Path) -> Result<Vec<String>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        source_name: path.display().to_string(),
        key: String::new(),
        problem: format!("cannot read seed file: {e}"),
    })?;
    Ok(parse_seed_list(&text))
}

/// The URLs of a seed list's text.
pub fn parse_seed_list(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            line.split_once('#')
                .map_or(line, |(before, _)| before)
                .trim()
        })
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect()
}
