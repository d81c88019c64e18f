//! `docs/layout.md` against the tree: every entry it names exists, every file it names is
//! there, and every source file of the crate is named.

use std::path::{Path, PathBuf};

/// The text block of `docs/layout.md`, as (path, description) entries: a line that starts
/// at the margin opens an entry, indented lines go on with it.
fn entries(layout: &str) -> Vec<(String, String)> {
    let block = layout
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/layout.md has a ```text block");
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        if line.starts_with(' ') {
            let last = entries
                .last_mut()
                .expect("an entry before its continuation");
            last.1.push(' ');
            last.1.push_str(line.trim());
        } else {
            let (path, description) = line.split_once(' ').unwrap_or((line, ""));
            entries.push((path.to_string(), description.trim().to_string()));
        }
    }
    entries
}

/// Every file under `dir`, as paths relative to it, `target/` and hidden folders left out.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(read) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in read.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else if let Ok(relative) = path.strip_prefix(root) {
                out.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

/// The names of files and folders a description mentions: `word.rs` (or .md, .toml, .py,
/// .sh, .json, .pyi) and `word/`, with the path before them.
fn mentioned(description: &str) -> Vec<String> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || "_.-/".contains(c);
    let mut names = Vec::new();
    for token in description.split(|c: char| !is_name(c)) {
        let token = token.trim_matches('.');
        let file = [".rs", ".md", ".toml", ".py", ".sh", ".json", ".pyi"]
            .iter()
            .any(|ext| token.ends_with(ext));
        let folder = token.ends_with('/') && token.len() > 1;
        if file || folder {
            names.push(token.to_string());
        }
    }
    names
}

#[test]
fn the_layout_doc_names_the_tree_as_it_is() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let layout = std::fs::read_to_string(root.join("docs/layout.md")).unwrap();
    let entries = entries(&layout);
    let mut faults = Vec::new();
    for (path, description) in &entries {
        if !root.join(path).exists() {
            faults.push(format!("{path}: no such file or folder"));
            continue;
        }
        if !path.ends_with('/') {
            continue;
        }
        let under = files_under(&root.join(path));
        for name in mentioned(description) {
            // A name is the entry's (a file or folder under it), or the project root's.
            let under_entry = under
                .iter()
                .any(|file| format!("/{file}").contains(&format!("/{name}")));
            if !under_entry && !root.join(&name).exists() {
                faults.push(format!("{path}: names {name}, which is not there"));
            }
        }
        if path.starts_with("src/") {
            for file in under.iter().filter(|f| f.ends_with(".rs")) {
                let name = file.rsplit('/').next().unwrap_or(file);
                let test_only = name == "tests.rs" || name.ends_with("_tests.rs");
                if name == "mod.rs" || test_only || description.contains(name) {
                    continue;
                }
                faults.push(format!("{path}: {file} is not named"));
            }
        }
    }
    // Every module of the crate's root has an entry of its own.
    for file in std::fs::read_dir(root.join("src")).unwrap().flatten() {
        let name = file.file_name().to_string_lossy().into_owned();
        let entry = if file.path().is_dir() {
            format!("src/{name}/")
        } else {
            format!("src/{name}")
        };
        if !entries.iter().any(|(path, _)| *path == entry) {
            faults.push(format!("{entry} has no entry"));
        }
    }
    assert!(faults.is_empty(), "docs/layout.md:\n{}", faults.join("\n"));
}
