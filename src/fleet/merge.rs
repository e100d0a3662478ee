//! `merge`: reads the JSON Lines of any number of scans (shards of one archive, or scans of
//! several archives), folds their bundle lines into one fleet summary, and checks that the
//! shards are complete: each file should end with its fleet line, and the `K/N` of the shard
//! fleet lines should cover 0..N once.

use super::bundle::{BundleLine, SCAN_SCHEMA};
use super::summary::{self, FleetSummary, FLEET_SCHEMA};
use crate::input::container::{sniff, Magic};
use crate::words::counted_as;
use std::collections::BTreeMap;
use std::io::Read;

/// What `merge` read.
#[derive(Clone, Debug)]
pub struct MergeResult {
    /// Every bundle line, in file then line order.
    pub lines: Vec<BundleLine>,
    /// Their fleet summary.
    pub summary: FleetSummary,
    /// Problems: unreadable files, bad lines, missing or repeated shards.
    pub warnings: Vec<String>,
    /// Files that could be read and held at least one faultline line.
    pub files_read: usize,
    /// Why the summary does not cover the archive once (missing, repeated or mixed shards,
    /// fewer or more shard outputs than `--expect`): `merge` fails on these.
    pub incomplete: Vec<String>,
}

impl MergeResult {
    /// True when not one file could be read.
    pub fn nothing_read(&self) -> bool {
        self.files_read == 0
    }
}

/// Reads a result file (`-` for stdin), gzip- or zstd-compressed or plain.
fn read_text(path: &str) -> Result<String, String> {
    let mut raw = Vec::new();
    let r = if path == "-" {
        std::io::stdin().lock().read_to_end(&mut raw)
    } else {
        std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut raw))
    };
    r.map_err(|e| format!("{path}: cannot read: {e}"))?;
    let data = match sniff(&raw) {
        m @ (Magic::Gzip | Magic::Zstd) => decode_capped(path, raw, m == Magic::Gzip)?,
        _ => raw,
    };
    Ok(String::from_utf8_lossy(&data).into_owned())
}

/// Decodes a compressed result file within the caps `analyze` applies (member size, and the
/// expansion ratio checked as bytes are produced), so a bomb among the shards is refused.
fn decode_capped(path: &str, raw: Vec<u8>, gzip: bool) -> Result<Vec<u8>, String> {
    let limits = crate::input::Limits::default();
    let what = if gzip { "gzip" } else { "zstd" };
    let dec = crate::input::stream_decoder::open_stream(
        Box::new(std::io::Cursor::new(raw)),
        gzip,
        limits,
    );
    let notes = dec.notes.clone();
    let mut s = crate::input::container::Stream::new(Box::new(dec), limits);
    let mut out = Vec::new();
    s.fill(&mut out, usize::MAX);
    let mut why = s.warnings;
    why.append(&mut notes.lock().unwrap_or_else(|e| e.into_inner()));
    if why.is_empty() {
        Ok(out)
    } else {
        Err(format!(
            "{path}: corrupt {what} or past the caps: {}",
            why.join("; ")
        ))
    }
}

/// The fleet line of one file, as far as merge checks it.
struct FileFleet {
    shard: Option<String>,
    bundles: Option<u64>,
}

/// Skipped lines of one reason told per file; the rest are counted in one warning.
const LINE_WARNINGS_PER_FILE: usize = 3;

/// Parses one file; pushes its bundle lines and returns its fleet line, if any.
fn parse_file(
    path: &str,
    text: &str,
    lines: &mut Vec<BundleLine>,
    warnings: &mut Vec<String>,
) -> (usize, Option<FileFleet>) {
    let mut f = FileReader {
        path,
        fleet: None,
        own: 0,
        recognized: 0,
        skipped: BTreeMap::new(),
    };
    for (i, raw) in text.lines().enumerate() {
        let raw = raw.trim();
        if !raw.is_empty() {
            f.line(i + 1, raw, lines, warnings);
        }
    }
    f.finish(warnings);
    (f.recognized, f.fleet)
}

/// One result file as it is read.
struct FileReader<'a> {
    path: &'a str,
    /// Its fleet line.
    fleet: Option<FileFleet>,
    /// Bundle lines read.
    own: usize,
    /// Lines of either schema.
    recognized: usize,
    /// Lines skipped per reason: the first few are told, the rest counted.
    skipped: BTreeMap<&'static str, usize>,
}

impl FileReader<'_> {
    /// Reads line `n` (trimmed, not empty).
    fn line(
        &mut self,
        n: usize,
        raw: &str,
        lines: &mut Vec<BundleLine>,
        warnings: &mut Vec<String>,
    ) {
        let at = format!("{}:{n}", self.path);
        let v: serde_json::Value = match serde_json::from_str(raw) {
            Ok(v) => v,
            Err(e) => {
                let text = format!("{at}: not JSON ({e}); line skipped");
                self.skip("not JSON", text, warnings);
                return;
            }
        };
        match v.get("schema").and_then(|s| s.as_str()) {
            Some(SCAN_SCHEMA) => match serde_json::from_value::<BundleLine>(v) {
                Ok(l) => {
                    lines.push(l);
                    self.own += 1;
                    self.recognized += 1;
                }
                Err(e) => warnings.push(format!("{at}: bad {SCAN_SCHEMA} line ({e}); skipped")),
            },
            Some(FLEET_SCHEMA) => {
                self.recognized += 1;
                if self.fleet.is_some() {
                    warnings.push(format!("{at}: a second {FLEET_SCHEMA} line in one file"));
                }
                self.fleet = Some(FileFleet {
                    shard: v.get("shard").and_then(|s| s.as_str()).map(str::to_string),
                    bundles: v.get("bundles").and_then(|b| b.as_u64()),
                });
            }
            other => {
                let text = format!(
                    "{at}: not a faultline scan line (schema {}); skipped",
                    other.unwrap_or("missing")
                );
                self.skip("not a faultline scan line", text, warnings);
            }
        }
    }

    fn skip(&mut self, why: &'static str, text: String, warnings: &mut Vec<String>) {
        let n = self.skipped.entry(why).or_default();
        *n += 1;
        if *n <= LINE_WARNINGS_PER_FILE {
            warnings.push(text);
        }
    }

    /// The counts of the skipped lines not told, and a missing or disagreeing fleet line.
    fn finish(&self, warnings: &mut Vec<String>) {
        let path = self.path;
        for (why, &n) in &self.skipped {
            if n > LINE_WARNINGS_PER_FILE {
                warnings.push(format!(
                    "{path}: {} more {} skipped as {why} (only the first {LINE_WARNINGS_PER_FILE} are told)",
                    n - LINE_WARNINGS_PER_FILE,
                    if n - LINE_WARNINGS_PER_FILE == 1 { "line" } else { "lines" }
                ));
            }
        }
        let own = self.own;
        match &self.fleet {
            None if self.recognized > 0 => warnings.push(format!(
                "{path}: no {FLEET_SCHEMA} line at the end: the scan did not finish or the file was cut"
            )),
            Some(FileFleet {
                bundles: Some(n), ..
            }) if *n != own as u64 => warnings.push(format!(
                "{path}: its fleet line counts {n} bundles but the file holds {own} bundle lines"
            )),
            _ => {}
        }
    }
}

/// Checks that the shards seen cover `0..N` exactly once (N = `expect` when given); what is
/// wrong goes to `incomplete`.
fn check_shards(
    shards: &[(String, String)],
    expect: Option<u64>,
    unsharded: &[String],
    warnings: &mut Vec<String>,
) -> Vec<String> {
    let mut incomplete = Vec::new();
    let mut counts: BTreeMap<u64, BTreeMap<u64, Vec<&str>>> = BTreeMap::new();
    for (file, s) in shards {
        match s.parse::<super::shard::Shard>() {
            Ok(sh) => counts
                .entry(sh.count)
                .or_default()
                .entry(sh.index)
                .or_default()
                .push(file),
            Err(e) => warnings.push(format!("{file}: shard `{s}`: {e}")),
        }
    }
    if let Some(n) = expect {
        counts.entry(n).or_default();
        if !unsharded.is_empty() {
            incomplete.push(format!(
                "--expect {n}: not the output of a shard (no K/N on its fleet line): {}",
                unsharded.join(", ")
            ));
        }
        let other: Vec<String> = counts
            .keys()
            .filter(|k| **k != n)
            .map(|k| k.to_string())
            .collect();
        if !other.is_empty() {
            incomplete.push(format!(
                "--expect {n}: shard outputs of a split into {} given",
                other.join(", ")
            ));
        }
    }
    if counts.len() > 1 && expect.is_none() {
        let ns: Vec<String> = counts.keys().map(|n| n.to_string()).collect();
        incomplete.push(format!(
            "shard outputs of different splits (N = {}): bundles may be missing or counted twice",
            ns.join(", ")
        ));
    }
    for (n, seen) in &counts {
        let missing: Vec<String> = (0..*n)
            .filter(|k| !seen.contains_key(k))
            .map(|k| format!("{k}/{n}"))
            .collect();
        if !missing.is_empty() {
            incomplete.push(format!(
                "missing shard {}: {}",
                if missing.len() == 1 {
                    "output"
                } else {
                    "outputs"
                },
                missing.join(", ")
            ));
        }
        for (k, files) in seen.iter().filter(|(_, f)| f.len() > 1) {
            incomplete.push(format!(
                "shard {k}/{n} given more than once: {}",
                files.join(", ")
            ));
        }
    }
    incomplete
}

/// Reads and folds the given result files; `expect` is the number of shard outputs that must
/// be there (`--expect N`), each with its own `K/N`.
pub fn merge(paths: &[String], expect: Option<u64>) -> MergeResult {
    let mut lines = Vec::new();
    let mut warnings = Vec::new();
    let mut shards = Vec::new();
    let mut unsharded = Vec::new();
    let mut files_read = 0;
    for p in paths {
        match read_text(p) {
            Ok(text) => {
                let (recognized, fleet) = parse_file(p, &text, &mut lines, &mut warnings);
                if recognized > 0 {
                    files_read += 1;
                } else {
                    warnings.push(format!("{p}: no faultline scan line in it"));
                }
                match fleet.and_then(|f| f.shard) {
                    Some(s) => shards.push((p.clone(), s)),
                    None if recognized > 0 => unsharded.push(p.clone()),
                    None => {}
                }
            }
            Err(e) => warnings.push(e),
        }
    }
    let incomplete = check_shards(&shards, expect, &unsharded, &mut warnings);
    let summary = summary::fold(&lines);
    if summary.duplicates > 0 {
        warnings.push(format!(
            "{} in more than one line; the last line of each counts",
            counted_as(summary.duplicates, "bundle appears", "bundles appear")
        ));
    }
    MergeResult {
        lines,
        summary,
        warnings,
        files_read,
        incomplete,
    }
}
