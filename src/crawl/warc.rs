//! WARC/1.1 output: one gzip member per record, files rotated by size.
//!
//! - `warcinfo` opens every file;
//! - `response` for a stored page: the HTTP status line, the response's content type and
//!   length, and the (decompressed) body, with `WARC-Payload-Digest` and
//!   `WARC-Block-Digest` (SHA-1, base32);
//! - `revisit` for an exact duplicate: profile `identical-payload-digest` of WARC 1.1 (the
//!   main text is identical; the payload digest given is the duplicate's own), naming the
//!   original in `WARC-Refers-To-Target-URI`;
//! - `revisit` for a near duplicate: profile [`NEAR_DUPLICATE_PROFILE`], naming the
//!   original and the distance in `WARC-Simhash-Distance`.
//!
//! Files are `OUT/warc/crawldedup-NNNNN.warc.gz`. The position (file number, length) is
//! part of every crawl checkpoint; on resume, later files are removed and the current one
//! is cut back, so no record is torn or written twice.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha1::Digest as _;

/// The revisit profile used for near duplicates.
pub const NEAR_DUPLICATE_PROFILE: &str = "https://crawldedup.invalid/warc/revisit/near-duplicate";

const IDENTICAL_PAYLOAD_PROFILE: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// Where the writer stands: file number and its length in bytes.
pub type WarcPosition = (u64, u64);

/// Writes WARC records into rotating gzip files.
pub struct WarcWriter {
    dir: PathBuf,
    rotate_bytes: u64,
    number: u64,
    file: std::fs::File,
    length: u64,
}

fn file_name(number: u64) -> String {
    format!("crawldedup-{number:05}.warc.gz")
}

impl WarcWriter {
    /// Opens the writer in `dir` at `position` (a checkpoint's): files after it are
    /// removed, its file is cut to its length.
    pub fn open(
        dir: &Path,
        rotate_bytes: u64,
        position: WarcPosition,
    ) -> std::io::Result<WarcWriter> {
        std::fs::create_dir_all(dir)?;
        let (number, length) = position;
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let later = name
                .strip_prefix("crawldedup-")
                .and_then(|n| n.strip_suffix(".warc.gz"))
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|n| n > number);
            if later {
                std::fs::remove_file(entry.path())?;
            }
        }
        let path = dir.join(file_name(number));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        file.set_len(length)?;
        let mut writer = WarcWriter {
            dir: dir.to_path_buf(),
            rotate_bytes: rotate_bytes.max(1),
            number,
            file,
            length,
        };
        use std::io::Seek;
        writer.file.seek(std::io::SeekFrom::Start(length))?;
        if length == 0 {
            writer.warcinfo()?;
        }
        Ok(writer)
    }

    /// The current position, after syncing the file.
    pub fn sync(&mut self) -> std::io::Result<WarcPosition> {
        self.file.sync_data()?;
        Ok((self.number, self.length))
    }

    fn warcinfo(&mut self) -> std::io::Result<()> {
        let body = format!(
            "software: crawldedup/{}\r\nformat: WARC File Format 1.1\r\n",
            env!("CARGO_PKG_VERSION")
        );
        self.record(
            "warcinfo",
            None,
            &[("Content-Type", "application/warc-fields".into())],
            body.as_bytes(),
        )
    }

    fn rotate_if_full(&mut self) -> std::io::Result<()> {
        if self.length >= self.rotate_bytes {
            self.file.sync_data()?;
            self.number += 1;
            self.file = std::fs::File::create(self.dir.join(file_name(self.number)))?;
            self.length = 0;
            self.warcinfo()?;
        }
        Ok(())
    }

    fn record(
        &mut self,
        kind: &str,
        target: Option<&str>,
        fields: &[(&str, String)],
        block: &[u8],
    ) -> std::io::Result<()> {
        let mut head = String::new();
        head.push_str("WARC/1.1\r\n");
        head.push_str(&format!("WARC-Type: {kind}\r\n"));
        head.push_str(&format!(
            "WARC-Record-ID: <urn:uuid:{}>\r\n",
            uuid::Uuid::new_v4()
        ));
        head.push_str(&format!(
            "WARC-Date: {}\r\n",
            humantime::format_rfc3339_seconds(std::time::SystemTime::now())
        ));
        if let Some(target) = target {
            head.push_str(&format!("WARC-Target-URI: {target}\r\n"));
        }
        for (name, value) in fields {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", block.len()));
        let mut encoder = flate2::write::GzEncoder::new(
            Vec::with_capacity(block.len() / 3 + 256),
            flate2::Compression::fast(),
        );
        encoder.write_all(head.as_bytes())?;
        encoder.write_all(block)?;
        encoder.write_all(b"\r\n\r\n")?;
        let member = encoder.finish()?;
        self.file.write_all(&member)?;
        self.length += member.len() as u64;
        Ok(())
    }

    /// A `response` record for a stored page.
    pub fn response(
        &mut self,
        url: &str,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
    ) -> std::io::Result<()> {
        self.rotate_if_full()?;
        let mut block = http_head(status, content_type, body.len());
        block.extend_from_slice(body);
        let fields = [
            (
                "Content-Type",
                "application/http;msgtype=response".to_string(),
            ),
            ("WARC-Payload-Digest", sha1_digest(body)),
            ("WARC-Block-Digest", sha1_digest(&block)),
        ];
        self.record("response", Some(url), &fields, &block)
    }

    /// A `revisit` record for a duplicate of `original` (exact when `distance` is `None`).
    pub fn revisit(
        &mut self,
        url: &str,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
        original: &str,
        distance: Option<u32>,
    ) -> std::io::Result<()> {
        self.rotate_if_full()?;
        let block = http_head(status, content_type, body.len());
        let mut fields = vec![
            (
                "Content-Type",
                "application/http;msgtype=response".to_string(),
            ),
            (
                "WARC-Profile",
                match distance {
                    None => IDENTICAL_PAYLOAD_PROFILE.to_string(),
                    Some(_) => NEAR_DUPLICATE_PROFILE.to_string(),
                },
            ),
            ("WARC-Refers-To-Target-URI", original.to_string()),
            ("WARC-Payload-Digest", sha1_digest(body)),
            ("WARC-Block-Digest", sha1_digest(&block)),
        ];
        if let Some(d) = distance {
            fields.push(("WARC-Simhash-Distance", d.to_string()));
        }
        self.record("revisit", Some(url), &fields, &block)
    }
}

fn http_head(status: u16, content_type: Option<&str>, length: usize) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        203 => "Non-Authoritative Information",
        _ => "",
    };
    let mut head = format!("HTTP/1.1 {status} {reason}\r\n");
    if let Some(ct) = content_type {
        head.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    head.push_str(&format!("Content-Length: {length}\r\n\r\n"));
    head.into_bytes()
}

/// `sha1:` and the base32 SHA-1 of `bytes`, as WARC digests are written.
pub fn sha1_digest(bytes: &[u8]) -> String {
    let digest = sha1::Sha1::digest(bytes);
    format!("sha1:{}", data_encoding::BASE32.encode(&digest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn records(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        let mut out = Vec::new();
        for path in names {
            let bytes = std::fs::read(path).unwrap();
            let mut decoder = flate2::read::MultiGzDecoder::new(&bytes[..]);
            let mut text = Vec::new();
            decoder.read_to_end(&mut text).unwrap();
            let text = String::from_utf8_lossy(&text).into_owned();
            out.extend(
                text.split("WARC/1.1\r\n")
                    .filter(|r| !r.is_empty())
                    .map(str::to_string),
            );
        }
        out
    }

    #[test]
    fn records_rotate_and_resume_cuts_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::open(dir.path(), 600, (0, 0)).unwrap();
        w.response("http://a.test/", 200, Some("text/html"), b"<p>hello</p>")
            .unwrap();
        let position = w.sync().unwrap();
        w.revisit(
            "http://a.test/copy",
            200,
            Some("text/html"),
            b"<p>hello!</p>",
            "http://a.test/",
            None,
        )
        .unwrap();
        for i in 0..10 {
            w.response(&format!("http://a.test/{i}"), 200, None, &vec![b'x'; 300])
                .unwrap();
        }
        assert!(
            std::fs::read_dir(dir.path()).unwrap().count() > 1,
            "no rotation"
        );
        drop(w);
        // Resume at the earlier position: the later records are gone.
        let mut w = WarcWriter::open(dir.path(), 600, position).unwrap();
        w.revisit(
            "http://a.test/near",
            200,
            None,
            b"x",
            "http://a.test/",
            Some(2),
        )
        .unwrap();
        drop(w);
        let all = records(dir.path());
        assert_eq!(all.len(), 3, "{all:#?}");
        assert!(all[0].starts_with("WARC-Type: warcinfo"));
        assert!(
            all[1].contains("WARC-Type: response") && all[1].contains("WARC-Payload-Digest: sha1:")
        );
        assert!(
            all[2].contains(NEAR_DUPLICATE_PROFILE) && all[2].contains("WARC-Simhash-Distance: 2")
        );
    }

    #[test]
    fn sha1_digest_is_base32() {
        // SHA-1 of the empty string.
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    }
}
