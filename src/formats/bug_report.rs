//! `nvidia-bug-report.log`: a bundle of sections captured at one moment on one host. The whole
//! text is scanned by the recognizers (so evidence keeps the bundle's line numbers); this module
//! finds the sections, the host, the capture time, the driver version and the nvidia-smi dumps.

use crate::model::WallStamp;

/// The section separator: a line of 44 underscores.
pub const SEPARATOR: &str = "____________________________________________";

/// True when the text starts like a bug report.
pub fn looks_like(head: &[u8]) -> bool {
    let h = &head[..head.len().min(8192)];
    memchr::memmem::find(h, b"Start of NVIDIA bug report log file").is_some()
        || (memchr::memmem::find(h, b"nvidia-bug-report.sh").is_some()
            && memchr::memmem::find(h, SEPARATOR.as_bytes()).is_some())
}

/// One section: its header and 0-based line range (header line included).
#[derive(Clone, Debug)]
pub struct Section {
    /// First non-empty line after the separator.
    pub header: String,
    /// 0-based line of the header.
    pub start: usize,
    /// 0-based line after the last line.
    pub end: usize,
}

/// What the bundle says about its host.
#[derive(Clone, Debug, Default)]
pub struct BundleInfo {
    /// Host name (from `uname`).
    pub host: Option<String>,
    /// Kernel release (from `uname`).
    pub kernel: Option<String>,
    /// Capture time from the `Date:` line.
    pub captured: Option<WallStamp>,
    /// UTC offset of the host, from `*** ls:` lines.
    pub utc_offset: Option<i32>,
    /// Driver version from `/proc/driver/nvidia/version`.
    pub driver: Option<String>,
    /// Sections.
    pub sections: Vec<Section>,
    /// Script version.
    pub script_version: Option<String>,
    /// Sections cut short or missing, and the end marker's absence.
    pub coverage_gaps: Vec<String>,
    /// The tool that made the bundle when it is not a bug report (`faultline collect`); its
    /// host and capture time hold for every member of the archive it came in.
    pub capture: Option<String>,
}

/// Splits the report and reads its metadata.
pub fn parse(text: &str) -> BundleInfo {
    let mut info = BundleInfo::default();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut cur: Option<Section> = None;
    let mut saw_end = false;
    while i < lines.len() {
        let l = lines[i].trim_end_matches('\r');
        if l == SEPARATOR {
            if let Some(mut s) = cur.take() {
                s.end = i;
                info.sections.push(s);
            }
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim().is_empty() {
                j += 1;
            }
            if j < lines.len() {
                cur = Some(Section {
                    header: lines[j].trim().to_string(),
                    start: j,
                    end: lines.len(),
                });
            }
            i = j.max(i + 1);
            continue;
        }
        saw_end |= read_meta(l, &mut info);
        i += 1;
    }
    if let Some(mut s) = cur.take() {
        s.end = lines.len();
        info.sections.push(s);
    }
    if !saw_end {
        info.coverage_gaps.push("the report has no 'End of NVIDIA bug report log file' line: the capture was cut short or the file is an excerpt".into());
    }
    for want in ["dmesg:", "Scanning kernel log files", "nvidia-smi --query"] {
        if !info.sections.iter().any(|s| s.header.contains(want)) {
            info.coverage_gaps
                .push(format!("no '{want}' section in the report"));
        }
    }
    if let (Some(c), Some(off)) = (info.captured.as_mut(), info.utc_offset) {
        if c.offset.is_none() {
            c.offset = Some(off);
        }
    }
    info
}

/// Reads what line `l` tells of the report (its script version, capture date, host and kernel,
/// driver, time zone) into `info`; true when it is the report's end marker.
fn read_meta(l: &str, info: &mut BundleInfo) -> bool {
    if let Some(v) = l.strip_prefix("nvidia-bug-report.sh Version: ") {
        info.script_version = Some(v.trim().to_string());
    } else if let Some(v) = l.strip_prefix("Date: ") {
        info.captured = super::time::ctime_datetime(v.trim().as_bytes())
            .map(|x| x.0)
            .or_else(|| super::locale::cjk_datetime(v.trim().as_bytes()));
    } else if let Some(v) = l.strip_prefix("uname: ") {
        let mut f = v.split_whitespace();
        f.next();
        info.host = f.next().map(str::to_string);
        info.kernel = f.next().map(str::to_string);
    } else if l.starts_with("NVRM version:") && info.driver.is_none() {
        info.driver = l
            .split_whitespace()
            .find(|w| {
                w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.matches('.').count() >= 1
            })
            .map(str::to_string);
    } else if let Some(v) = l.strip_prefix("*** ls: ") {
        if info.utc_offset.is_none() {
            // `… 2024-12-19 15:21:06.560252041 +0800 /path`
            info.utc_offset = v
                .split_whitespace()
                .filter(|w| (w.starts_with('+') || w.starts_with('-')) && w.len() == 5)
                .find_map(|w| super::time::zone(w.as_bytes()).map(|(off, _)| off));
        }
    } else {
        return l.starts_with("End of NVIDIA bug report log file");
    }
    false
}

/// The sections holding `nvidia-smi --query` output (their body lines, 0-based).
pub fn smi_sections(info: &BundleInfo) -> Vec<(usize, usize)> {
    info.sections
        .iter()
        .filter(|s| s.header.ends_with("nvidia-smi --query") || s.header.ends_with("nvidia-smi -q"))
        .map(|s| (s.start + 1, s.end))
        .collect()
}
