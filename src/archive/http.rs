//! The HTTP response in a WARC or ARC record's block, read as a crawler received it: the
//! status line and headers, then the body, un-chunked and decompressed.

use std::io::Read;

use super::warc::MAX_RECORD_BYTES as MAX_BODY_BYTES;

/// The content type and the body of an HTTP response as a WARC block holds it; what was
/// forgiven goes to `warnings`.
pub fn http_response(
    block: &[u8],
    warnings: &mut Vec<String>,
) -> Result<(Option<String>, Vec<u8>), String> {
    let split = block
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no HTTP headers in the block")?;
    let head = String::from_utf8_lossy(&block[..split]);
    let body = &block[split + 4..];
    let header = |name: &str| {
        head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    };
    // Many writers keep the `Transfer-Encoding: chunked` header of a body they stored
    // de-chunked (warcio reads such a body as it is, too).
    let mut body = if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        dechunk(body).unwrap_or_else(|problem| {
            warnings.push(format!(
                "`Transfer-Encoding: chunked` on a body that is not chunked ({problem}): \
                 read as it is"
            ));
            body.to_vec()
        })
    } else {
        body.to_vec()
    };
    match header("content-encoding").map(|c| c.to_ascii_lowercase()) {
        None => {}
        Some(c) if c == "identity" => {}
        Some(c) if matches!(c.as_str(), "gzip" | "x-gzip" | "deflate" | "br") => {
            let mut plain = Vec::new();
            let read = match c.as_str() {
                "deflate" => flate2::read::ZlibDecoder::new(&body[..])
                    .take(MAX_BODY_BYTES + 1)
                    .read_to_end(&mut plain),
                "br" => brotli_decompressor::Decompressor::new(&body[..], 1 << 16)
                    .take(MAX_BODY_BYTES + 1)
                    .read_to_end(&mut plain),
                _ => flate2::read::MultiGzDecoder::new(&body[..])
                    .take(MAX_BODY_BYTES + 1)
                    .read_to_end(&mut plain),
            };
            read.map_err(|e| format!("corrupt {c} body: {e}"))?;
            if plain.len() as u64 > MAX_BODY_BYTES {
                return Err(format!("body larger than {} MiB", MAX_BODY_BYTES >> 20));
            }
            body = plain;
        }
        Some(other) => return Err(format!("a body in `{other}` coding, which is not read")),
    }
    Ok((header("content-type"), body))
}

/// A chunked body, joined.
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(body.len());
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a chunk size line without its end")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| {
            format!(
                "unreadable chunk size `{}`",
                super::printable_line(size_text, 40)
            )
        })?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = body.get(..size).ok_or("a chunk cut short")?;
        out.extend_from_slice(chunk);
        body = body.get(size + 2..).unwrap_or_default();
    }
}
