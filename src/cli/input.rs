//! Inputs named on the command line: files, `-` for stdin, gzip, a size cap.

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::Failure;

/// An input named on the command line: `-` (or no name at all) is stdin.
pub(super) struct Input {
    pub(super) name: String,
    pub(super) bytes: Vec<u8>,
}

/// The most bytes an input may hold, read or decompressed (a gzip bomb stops here).
pub(super) const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads one input (`-` is stdin). A gzip-compressed input (a saved `.html.gz`) is
/// decompressed. The error names the input and the problem.
pub(super) fn read_input(path: &Path) -> Result<Input, String> {
    use io::Read;
    let name = path.display().to_string();
    let too_big = || format!("{name}: larger than {} MiB", MAX_INPUT_BYTES >> 20);
    let mut bytes = Vec::new();
    let read = if name == "-" {
        io::stdin()
            .lock()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| format!("{name}: {e}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_big());
    }
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut plain)
            .map_err(|e| format!("{name}: corrupt gzip data: {e}"))?;
        if plain.len() as u64 > MAX_INPUT_BYTES {
            return Err(too_big());
        }
        bytes = plain;
    }
    Ok(Input { name, bytes })
}

/// Calls `each` with every text input in turn (stdin when there are none), reading one at
/// a time. An input that cannot be read, or that is binary rather than text, gets one line
/// on stderr and is passed over; the result is exit code 1 if any was.
pub(super) fn for_each_text_input(
    files: &[PathBuf],
    mut each: impl FnMut(Input) -> Result<(), Failure>,
) -> Result<ExitCode, Failure> {
    let stdin = [PathBuf::from("-")];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let mut failed = false;
    for path in files {
        match read_input(path) {
            Ok(input) if crawldedup::content::decode::looks_binary(&input.bytes) => {
                eprintln!("error: {}: binary data, not text", input.name);
                failed = true;
            }
            Ok(input) => each(input)?,
            Err(problem) => {
                eprintln!("error: {problem}");
                failed = true;
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
