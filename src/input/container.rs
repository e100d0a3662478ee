//! Containers, detected by magic bytes and decoded as streams into memory within the limits:
//! gzip (all members), zstd (all frames), tar (entries read, never extracted), nested.

use super::{Bytes, Input, Limits};
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};

/// Compressed inputs larger than this are decoded as a stream when they hold plain text.
pub const STREAM_THRESHOLD: u64 = 8 << 20;
/// The first block of a streamed input (format detection reads it).
pub const STREAM_HEAD: usize = 4 << 20;

/// A decoder of a large compressed text input, read in blocks by the pipeline, with the same
/// caps as whole decoding (member size, ratio, total budget); problems go to `warnings`.
pub struct Stream {
    reader: Box<dyn Read + Send>,
    compressed: u64,
    read: u64,
    limits: Limits,
    budget: std::sync::Arc<AtomicU64>,
    done: bool,
    /// For a plain file: the size it had when opened (a shorter read means it shrank).
    expected: Option<u64>,
    /// What stopped the stream early, if anything.
    pub warnings: Vec<String>,
}

impl Stream {
    /// A stream over `reader`, whose source has `compressed` bytes, within `limits`.
    pub fn new(reader: Box<dyn Read + Send>, compressed: u64, limits: Limits) -> Stream {
        Stream {
            reader,
            compressed,
            read: 0,
            limits,
            budget: std::sync::Arc::new(AtomicU64::new(0)),
            done: false,
            expected: None,
            warnings: Vec::new(),
        }
    }

    /// Marks the source as a plain file of `len` bytes: ending earlier adds a warning.
    pub fn expect_len(&mut self, len: u64) {
        self.expected = Some(len);
    }

    /// Reads the next block of up to `max` bytes into `buf` (appending); returns bytes added, 0 at the end.
    pub fn fill(&mut self, buf: &mut Vec<u8>, max: usize) -> usize {
        if self.done {
            return 0;
        }
        let start = buf.len();
        const STEP: usize = 4 << 20;
        while buf.len() - start < max {
            let at = buf.len();
            buf.resize(at + STEP.min(max - (at - start)), 0);
            let r = self.reader.read(&mut buf[at..]);
            let got = *r.as_ref().unwrap_or(&0);
            buf.truncate(at + got);
            match r {
                Ok(0) => {
                    self.done = true;
                    if let Some(len) = self.expected.filter(|&l| self.read < l) {
                        self.warnings.push(format!(
                            "file shrank while being read: {} of {len} bytes; the part read is analyzed",
                            self.read
                        ));
                    }
                    break;
                }
                Ok(n) => {
                    self.read += n as u64;
                    if self.read > self.limits.max_member_bytes {
                        self.warnings.push(format!(
                            "decompressed size passed the cap of {} bytes; the rest is not read",
                            self.limits.max_member_bytes
                        ));
                        self.done = true;
                        break;
                    }
                    if self.read > 64 << 20
                        && self.read / self.compressed.max(1) > self.limits.max_ratio
                    {
                        self.warnings.push(format!("expansion ratio passed {}:1 after {} bytes (decompression bomb?); the rest is not read", self.limits.max_ratio, self.read));
                        self.done = true;
                        break;
                    }
                    if self.budget.fetch_add(n as u64, Ordering::Relaxed) + n as u64
                        > self.limits.max_total_bytes
                    {
                        self.warnings.push(format!(
                            "total decompressed bytes passed the cap of {}; the rest is not read",
                            self.limits.max_total_bytes
                        ));
                        self.done = true;
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.warnings.push(format!("corrupt or truncated stream after {} decompressed bytes: {e}; the part before is analyzed", self.read));
                    self.done = true;
                    break;
                }
            }
        }
        buf.len() - start
    }
}

/// What the first bytes say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Magic {
    /// gzip member.
    Gzip,
    /// zstd frame (or skippable frame).
    Zstd,
    /// POSIX or GNU tar.
    Tar,
    /// Formats recognized but not decoded.
    Unsupported(&'static str),
    /// systemd binary journal.
    Journal,
    /// Anything else: text (or junk) to scan.
    Plain,
}

/// Sniffs the container type.
pub fn sniff(b: &[u8]) -> Magic {
    if b.starts_with(&[0x1f, 0x8b]) {
        Magic::Gzip
    } else if b.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
        || (b.len() >= 4 && b[0] & 0xf0 == 0x50 && b[1..4] == [0x2a, 0x4d, 0x18])
    {
        Magic::Zstd
    } else if b.len() >= 262 && &b[257..262] == b"ustar" {
        Magic::Tar
    } else if b.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Magic::Unsupported("xz")
    } else if b.starts_with(b"BZh") && b.get(3).is_some_and(|c| c.is_ascii_digit()) {
        Magic::Unsupported("bzip2")
    } else if b.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
        Magic::Unsupported("lz4")
    } else if b.starts_with(b"PK\x03\x04") {
        Magic::Unsupported("zip")
    } else if b.starts_with(b"LPKSHHRH") {
        Magic::Journal
    } else {
        Magic::Plain
    }
}

/// Reads a decoder into memory up to the member cap, the ratio cap and the global budget.
fn decode(
    mut r: impl Read,
    compressed: u64,
    what: &str,
    limits: &Limits,
    budget: &AtomicU64,
    warnings: &mut Vec<String>,
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                let len = out.len() as u64;
                if len > limits.max_member_bytes {
                    out.truncate(limits.max_member_bytes as usize);
                    warnings.push(format!("{what}: decompressed size passed the cap of {} bytes; the rest is not read", limits.max_member_bytes));
                    break;
                }
                if len > 64 << 20 && len / compressed.max(1) > limits.max_ratio {
                    warnings.push(format!(
                        "{what}: expansion ratio passed {}:1 after {len} bytes (decompression bomb?); the rest is not read",
                        limits.max_ratio
                    ));
                    break;
                }
                if budget.fetch_add(n as u64, Ordering::Relaxed) + n as u64 > limits.max_total_bytes
                {
                    warnings.push(format!("{what}: total decompressed bytes passed the cap of {}; the rest is not read", limits.max_total_bytes));
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                warnings.push(format!("{what}: corrupt or truncated stream after {} decompressed bytes: {e}; the part before is analyzed", out.len()));
                break;
            }
        }
    }
    out
}

/// Expands `bytes` into inputs: decodes containers recursively, or pushes a plain input.
#[allow(clippy::too_many_arguments)]
pub fn expand(
    path: String,
    host: Option<String>,
    bytes: Bytes,
    disk: u64,
    mtime: Option<i64>,
    mut warnings: Vec<String>,
    limits: &Limits,
    depth: u32,
    budget: &AtomicU64,
    out: &mut Vec<Input>,
) {
    let magic = sniff(&bytes);
    if magic != Magic::Plain && depth >= limits.max_depth {
        warnings.push(format!(
            "nested containers deeper than {} levels; not opened",
            limits.max_depth
        ));
        out.push(Input::unread(path, host, disk, mtime, warnings));
        return;
    }
    match magic {
        Magic::Plain => out.push(Input {
            path,
            host_hint: host,
            bytes,
            disk_bytes: disk,
            mtime,
            warnings,
            stream: None,
        }),
        Magic::Gzip | Magic::Zstd if bytes.len() as u64 > STREAM_THRESHOLD => {
            let compressed = bytes.len() as u64;
            let what = if magic == Magic::Gzip { "gzip" } else { "zstd" };
            let reader: Box<dyn Read + Send> = if magic == Magic::Gzip {
                Box::new(flate2::read::MultiGzDecoder::new(std::io::Cursor::new(
                    bytes,
                )))
            } else {
                match zstd::stream::read::Decoder::new(std::io::Cursor::new(bytes)) {
                    Ok(d) => Box::new(d),
                    Err(e) => {
                        warnings.push(format!("zstd: cannot start decoding: {e}"));
                        out.push(Input::unread(path, host, disk, mtime, warnings));
                        return;
                    }
                }
            };
            let mut stream = Stream {
                reader,
                compressed,
                read: 0,
                limits: *limits,
                budget: std::sync::Arc::new(AtomicU64::new(budget.load(Ordering::Relaxed))),
                done: false,
                expected: None,
                warnings: Vec::new(),
            };
            let mut head = Vec::new();
            stream.fill(&mut head, STREAM_HEAD);
            let inner = sniff(&head);
            if inner == Magic::Plain {
                // large compressed text: scanned block by block, never held whole
                for w in std::mem::take(&mut stream.warnings) {
                    warnings.push(format!("{what}: {w}"));
                }
                out.push(Input {
                    path,
                    host_hint: host,
                    bytes: Bytes::Owned(head),
                    disk_bytes: disk,
                    mtime,
                    warnings,
                    stream: Some(stream),
                });
            } else {
                // an archive inside: decode it whole (within the caps) and open it
                stream.fill(&mut head, usize::MAX);
                for w in std::mem::take(&mut stream.warnings) {
                    warnings.push(format!("{what}: {w}"));
                }
                expand(
                    path,
                    host,
                    Bytes::Owned(head),
                    disk,
                    mtime,
                    warnings,
                    limits,
                    depth + 1,
                    budget,
                    out,
                );
            }
        }
        Magic::Gzip => {
            let dec = flate2::read::MultiGzDecoder::new(&bytes[..]);
            let data = decode(
                dec,
                bytes.len() as u64,
                "gzip",
                limits,
                budget,
                &mut warnings,
            );
            drop(bytes);
            expand(
                path,
                host,
                Bytes::Owned(data),
                disk,
                mtime,
                warnings,
                limits,
                depth + 1,
                budget,
                out,
            );
        }
        Magic::Zstd => {
            let data = match zstd::stream::read::Decoder::with_buffer(&bytes[..]) {
                Ok(dec) => decode(
                    dec,
                    bytes.len() as u64,
                    "zstd",
                    limits,
                    budget,
                    &mut warnings,
                ),
                Err(e) => {
                    warnings.push(format!("zstd: cannot start decoding: {e}"));
                    Vec::new()
                }
            };
            drop(bytes);
            expand(
                path,
                host,
                Bytes::Owned(data),
                disk,
                mtime,
                warnings,
                limits,
                depth + 1,
                budget,
                out,
            );
        }
        Magic::Tar => {
            let before = out.len();
            read_tar(
                &path,
                host.as_deref(),
                &bytes,
                disk,
                limits,
                depth,
                budget,
                out,
                &mut warnings,
            );
            if out.len() == before || !warnings.is_empty() {
                // keep the archive's own warnings visible as an input of its own
                out.insert(before, Input::unread(path, host, disk, mtime, warnings));
            }
        }
        Magic::Unsupported(kind) => {
            warnings.push(format!(
                "{kind} compression is not supported; decompress it first"
            ));
            out.push(Input::unread(path, host, disk, mtime, warnings));
        }
        Magic::Journal => match super::journal_file::export(&path, &bytes, limits.max_member_bytes)
        {
            Ok(export) => {
                drop(bytes);
                warnings.push("systemd journal file read through `journalctl --file … -o export`; its lines are those of the export".to_string());
                let mut ins = Vec::new();
                expand(
                    path,
                    host,
                    Bytes::Owned(export),
                    disk,
                    mtime,
                    warnings,
                    limits,
                    depth + 1,
                    budget,
                    &mut ins,
                );
                out.extend(ins);
            }
            Err(w) => {
                warnings.push(w);
                out.push(Input::unread(path, host, disk, mtime, warnings));
            }
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn read_tar(
    path: &str,
    host: Option<&str>,
    bytes: &[u8],
    disk: u64,
    limits: &Limits,
    depth: u32,
    budget: &AtomicU64,
    out: &mut Vec<Input>,
    warnings: &mut Vec<String>,
) {
    let mut archive = tar::Archive::new(bytes);
    let entries = match archive.entries() {
        Ok(e) => e,
        Err(e) => {
            warnings.push(format!("tar: cannot read entries: {e}"));
            return;
        }
    };
    for (i, entry) in entries.enumerate() {
        let mut entry = match entry {
            Ok(e) => e,
            Err(e) => {
                warnings.push(format!(
                    "tar: corrupt header at entry {}: {e}; the entries after it are not read",
                    i + 1
                ));
                return;
            }
        };
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("entry{}", i + 1));
        let kind = entry.header().entry_type();
        let member = format!("{path}!{name}");
        if kind.is_symlink() || kind.is_hard_link() {
            warnings.push(format!(
                "tar: {name}: link entry skipped (links inside archives are never followed)"
            ));
            continue;
        }
        if !kind.is_file() {
            continue;
        }
        let mtime = entry.header().mtime().ok().map(|m| m as i64);
        let size = entry.header().size().unwrap_or(0);
        let mut w = Vec::new();
        let data = decode(
            &mut entry,
            size.max(1),
            &format!("tar member {name}"),
            limits,
            budget,
            &mut w,
        );
        // a member's host: the first folder inside the archive that looks like a host, else the archive's
        let member_host = host.map(str::to_string);
        expand(
            member,
            member_host,
            Bytes::Owned(data),
            disk,
            mtime,
            w,
            limits,
            depth + 1,
            budget,
            out,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_bytes() {
        assert_eq!(sniff(&[0x1f, 0x8b, 8, 0]), Magic::Gzip);
        assert_eq!(sniff(&[0x28, 0xb5, 0x2f, 0xfd, 0]), Magic::Zstd);
        assert_eq!(sniff(b"LPKSHHRH...."), Magic::Journal);
        assert_eq!(sniff(b"hello"), Magic::Plain);
        let mut t = vec![0u8; 512];
        t[257..262].copy_from_slice(b"ustar");
        assert_eq!(sniff(&t), Magic::Tar);
    }
}
