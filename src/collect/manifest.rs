//! `manifest.json`, the member of a collect bundle that says what was captured: the host, the
//! capture time, and for each item its command, exit status, duration, bytes, whether it was
//! cut, and why it is missing. Written by `faultline collect`; read back by `analyze` and `scan`
//! (the host and capture time of the bundle, its coverage gaps).

use serde::{Deserialize, Serialize};

/// The schema of the manifest.
pub const SCHEMA: &str = "faultline/collect/v1";

/// The member name of the manifest inside the bundle.
pub const MEMBER: &str = "manifest.json";

/// Why an item is missing.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Missing {
    /// The command, file or service is not on this node.
    NotInstalled,
    /// The command or file needs more privilege than the capture had.
    Permission,
    /// The command did not finish within its timeout (or the total budget).
    Timeout,
    /// The command ran and failed, or printed nothing usable.
    Failed,
}

impl Missing {
    /// The manifest's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Missing::NotInstalled => "not_installed",
            Missing::Permission => "permission",
            Missing::Timeout => "timeout",
            Missing::Failed => "failed",
        }
    }
}

/// One item of the capture.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ItemRecord {
    /// The item's name in the table (`kernel`, `nvidia-smi-q`, …).
    pub name: String,
    /// What it is for.
    pub purpose: String,
    /// The command run or the files read (the source that gave the data, else the first tried).
    pub command: String,
    /// The members it wrote (none when missing).
    pub members: Vec<String>,
    /// Exit status of the command (null for files, or when it was killed or never ran).
    pub exit_status: Option<i32>,
    /// Time spent, in milliseconds.
    pub duration_ms: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Cut at the item's size cap (or killed at its timeout after printing something).
    pub truncated: bool,
    /// Why nothing was captured, when nothing was.
    pub missing: Option<Missing>,
    /// What each source tried said (`journalctl: not found on PATH; dmesg -T: exit 1: …`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// What the report should say when the item is missing (`no fabric manager log`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub gap: String,
}

/// The whole manifest.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Manifest {
    /// [`SCHEMA`].
    pub schema: String,
    /// The faultline version that captured.
    pub faultline: String,
    /// Host name of the node (an alias with `--redact`).
    pub host: String,
    /// Capture time, RFC 3339 UTC (`2026-03-14T02:13:07Z`).
    pub captured_at: String,
    /// The node's UTC offset at capture, in seconds east.
    #[serde(default)]
    pub utc_offset_s: Option<i32>,
    /// Kernel release of the node (`uname -r`).
    #[serde(default)]
    pub kernel: Option<String>,
    /// Whether the capture ran as root.
    pub root: bool,
    /// `--since`, as given.
    #[serde(default)]
    pub since: Option<String>,
    /// Whether every member was redacted before it was written.
    pub redacted: bool,
    /// Wall time of the whole capture, in milliseconds.
    pub duration_ms: u64,
    /// The items, in table order.
    pub items: Vec<ItemRecord>,
}

/// Whether `head` (the first bytes of an input) is a collect manifest.
pub fn looks_like(head: &[u8]) -> bool {
    let h = &head[..head.len().min(200)];
    let start = h
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(h.len());
    h[start..].starts_with(b"{")
        && memchr::memmem::find(h, format!("\"schema\": \"{SCHEMA}\"").as_bytes()).is_some()
}

/// Reads a manifest; `None` when it is not one.
pub fn parse(bytes: &[u8]) -> Option<Manifest> {
    let m: Manifest = serde_json::from_slice(bytes).ok()?;
    (m.schema == SCHEMA).then_some(m)
}

impl Manifest {
    /// The coverage gaps, one sentence each (`no fabric manager log: nvidia-fabricmanager is
    /// not installed`), in table order.
    pub fn gaps(&self) -> Vec<String> {
        self.items
            .iter()
            .filter_map(|i| {
                let m = i.missing?;
                let what = if i.gap.is_empty() {
                    format!("no {}", i.name)
                } else {
                    i.gap.clone()
                };
                let why = if i.detail.is_empty() {
                    m.as_str().replace('_', " ")
                } else {
                    i.detail.clone()
                };
                Some(format!("{what}: {why}"))
            })
            .collect()
    }

    /// What the manifest tells of its bundle, as the analysis keeps it for a bug report: host,
    /// capture time (with its year: the anchor of year-less logs), zone, kernel, coverage gaps.
    pub fn bundle_info(&self) -> crate::formats::bug_report::BundleInfo {
        let captured = chrono::DateTime::parse_from_rfc3339(&self.captured_at)
            .ok()
            .map(|d| crate::model::WallStamp {
                naive_secs: d.timestamp(),
                micros: 0,
                offset: Some(0),
                has_year: true,
            });
        crate::formats::bug_report::BundleInfo {
            host: Some(self.host.clone()).filter(|h| !h.is_empty()),
            kernel: self.kernel.clone(),
            captured,
            utc_offset: self.utc_offset_s,
            coverage_gaps: self.gaps(),
            capture: Some("faultline collect".into()),
            ..Default::default()
        }
    }

    /// The manifest as written: pretty JSON with a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(self).unwrap_or_default();
        v.push(b'\n');
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            schema: SCHEMA.into(),
            faultline: "0.1.0".into(),
            host: "node-07".into(),
            captured_at: "2026-03-14T02:13:07Z".into(),
            utc_offset_s: Some(0),
            kernel: None,
            root: false,
            since: None,
            redacted: false,
            duration_ms: 10,
            items: vec![ItemRecord {
                name: "fabric-manager".into(),
                purpose: "fabric manager".into(),
                command: "journalctl -u nvidia-fabricmanager".into(),
                members: vec![],
                exit_status: None,
                duration_ms: 1,
                bytes: 0,
                truncated: false,
                missing: Some(Missing::NotInstalled),
                detail: "nvidia-fabricmanager is not installed".into(),
                gap: "no fabric manager log".into(),
            }],
        }
    }

    #[test]
    fn a_manifest_reads_back_and_names_its_gaps() {
        let m = sample();
        let b = m.to_bytes();
        assert!(looks_like(&b));
        assert_eq!(parse(&b), Some(m.clone()));
        assert_eq!(
            m.gaps(),
            vec!["no fabric manager log: nvidia-fabricmanager is not installed".to_string()]
        );
        assert!(!looks_like(b"{\"schema\": \"faultline/scan/v1\"}"));
        assert!(parse(b"{\"schema\": \"faultline/collect/v9\"}").is_none());
    }
}
