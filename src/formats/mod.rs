//! Input formats: detection by content and the per-line prefix readers that give each line its
//! time, host and message start. One file per family of formats; block formats (bug reports,
//! nvidia-smi dumps, dcgmi tables) have their own readers.

pub mod bmc;
pub mod bug_report;
pub mod clock;
pub mod dcgmi;
pub mod fields;
pub mod joblog;
pub mod journal;
pub mod journal_entries;
pub mod json_cut;
pub mod kernel;
pub mod locale;
pub mod nvidia_smi;
pub mod nvidia_smi_xml;
pub mod nvlink;
pub mod record;
pub mod repeat;
pub mod syslog;
pub mod time;
pub mod topo;
pub mod wrapper;

use crate::model::LineStamp;
use serde::Serialize;

/// The shape of one line's prefix (finer than [`Format`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Shape {
    /// `[  123.456789] ` (dmesg raw, `-r`, journal short-monotonic).
    DmesgRaw,
    /// `[Sun Feb 23 16:24:18 2025] ` (dmesg -T).
    DmesgCtime,
    /// `2025-01-21T04:41:44,283302+00:00 ` (dmesg iso).
    DmesgIso,
    /// `/dev/kmsg` records.
    Kmsg,
    /// RFC 3164 / journal short.
    Syslog,
    /// RFC 3339 syslog / journal short-iso.
    SyslogIso,
    /// RFC 5424.
    Syslog5424,
    /// Talos-style `host: kern: level: [time]: `.
    Talos,
    /// journal short-full.
    JournalFull,
    /// journal short-unix.
    JournalUnix,
    /// `[%F %T]`, Python asctime.
    JobBracket,
    /// PyTorch c10/glog.
    C10,
    /// Fabric Manager log.
    FabricManager,
    /// NCCL `host:pid:tid [dev]` without time.
    Nccl,
    /// `ipmitool sel list` / `elist` / `-c` (BMC clock).
    Sel,
    /// Package logs with a time on every line: dpkg.log, dnf.rpm.log, yum.log.
    Package,
    /// `[May19 19:57] ` of `dmesg -H` (minute changed).
    DmesgRel,
    /// `[  +0.000127] ` of `dmesg -H` (time since the line before).
    DmesgDelta,
}

/// Lines longer than this are cut for recognizers (the whole line is still searched for
/// anchors); the time-line readers look no further into a line either.
pub const MAX_RECORD_BYTES: usize = 64 * 1024;

/// Number of [`Shape`] variants (size of per-shape counters).
pub const SHAPES: usize = 18;

/// What a prefix reader found at the start of a line.
#[derive(Clone, Copy, Debug)]
pub struct Prefix<'a> {
    /// Time fields.
    pub stamp: LineStamp,
    /// Host named by the line.
    pub host: Option<&'a [u8]>,
    /// Byte offset where the message proper starts.
    pub msg_start: usize,
    /// Which shape matched.
    pub shape: Shape,
}

/// A prefix plus what launchers added before it.
#[derive(Clone, Copy, Debug)]
pub struct LineHead<'a> {
    /// The prefix, when a known shape matched.
    pub prefix: Option<Prefix<'a>>,
    /// Rank named by a wrapper (`[rankN]:`, `srun -l`, mpirun `[J,R]`).
    pub rank: Option<i64>,
    /// Where the message starts (after all prefixes).
    pub msg_start: usize,
    /// Host named by a wrapper (pdsh, `<job>.<node> [stderr]`, Ray).
    pub host: Option<&'a [u8]>,
    /// A launcher or collector wrapper was peeled off (see [`wrapper`]).
    pub wrapped: bool,
    /// Where the line starts after the wrappers.
    pub peeled: usize,
}

/// Reads a line's prefix, whatever its format.
pub fn parse_prefix(line: &[u8]) -> Option<Prefix<'_>> {
    let first = *line.first()?;
    match first {
        b'[' => kernel::raw(line)
            .or_else(|| kernel::ctime(line))
            .or_else(|| kernel::reldelta(line))
            .or_else(|| kernel::reltime(line))
            .or_else(|| joblog::job_prefix(line))
            .or_else(|| joblog::rich(line))
            .or_else(|| clock::clock_prefix(line)),
        b'<' => kernel::raw(line).or_else(|| syslog::rfc5424(line)),
        b'0'..=b'9' => {
            if line.len() > 19 && line.get(4) == Some(&b'-') {
                if line.get(19) == Some(&b',') && line.get(10) == Some(&b'T') {
                    kernel::iso(line)
                } else {
                    record::package_line(line)
                        .or_else(|| syslog::rfc3339(line))
                        .or_else(|| kernel::iso(line))
                        .or_else(|| joblog::job_prefix(line))
                }
            } else {
                kernel::kmsg(line)
                    .or_else(|| joblog::go_log(line))
                    .or_else(|| journal::short_unix(line))
                    .or_else(|| syslog::rfc3164(line))
                    .or_else(|| syslog::talos(line))
                    .or_else(|| bmc::sel(line))
                    .or_else(|| clock::clock_prefix(line))
            }
        }
        b'A'..=b'Z' | b'a'..=b'z' => syslog::rfc3164(line)
            .or_else(|| record::package_line(line))
            .or_else(|| journal::short_full(line))
            .or_else(|| kernel::decoded(line))
            .or_else(|| joblog::job_prefix(line))
            .or_else(|| joblog::nccl_untimed(line))
            .or_else(|| syslog::talos(line))
            .or_else(|| bmc::sel(line)),
        b' ' => joblog::job_prefix(line)
            .or_else(|| joblog::rich(line))
            .or_else(|| bmc::sel(line))
            .or_else(|| syslog::rfc3164(line)),
        _ => None,
    }
}

/// Finds `": "` in a short window without building a searcher.
pub fn find_colon_space(hay: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b':', hay).find(|&i| hay.get(i + 1) == Some(&b' '))
}

#[inline]
fn d(c: u8) -> bool {
    c.is_ascii_digit()
}

/// `Mmm dd HH:MM:SS ` by byte positions only (no calendar math).
#[inline]
fn looks_syslog(l: &[u8]) -> bool {
    l.len() > 16
        && l[0].is_ascii_uppercase()
        && l[1].is_ascii_lowercase()
        && l[2].is_ascii_lowercase()
        && l[3] == b' '
        && (l[4] == b' ' || d(l[4]))
        && d(l[5])
        && l[6] == b' '
        && d(l[7])
        && d(l[8])
        && l[9] == b':'
        && d(l[10])
        && d(l[11])
        && l[12] == b':'
        && d(l[13])
        && d(l[14])
        && (l[15] == b' ' || l[15] == b'.')
}

/// The cheap check of the counting pass: which shape a line's prefix has, and its uptime, reading
/// only fixed byte positions for the common kernel shapes (the full reader runs on candidate lines
/// and on lines that fail the cheap check).
#[inline]
pub fn quick_shape(line: &[u8]) -> Option<(Shape, Option<u64>)> {
    match *line.first()? {
        b'[' => {
            if let Some((m, _)) = time::bracket_uptime(line) {
                return Some((Shape::DmesgRaw, Some(m)));
            }
        }
        b'A'..=b'Z' if looks_syslog(line) => return Some((Shape::Syslog, None)),
        b'0'..=b'9'
            if line.len() > 26
                && line[4] == b'-'
                && line[7] == b'-'
                && line[10] == b'T'
                && line[13] == b':'
                && line[16] == b':' =>
        {
            return Some((
                if line[19] == b',' {
                    Shape::DmesgIso
                } else {
                    Shape::SyslogIso
                },
                None,
            ));
        }
        _ => {}
    }
    parse_head(line).prefix.map(|p| (p.shape, p.stamp.mono_us))
}

/// [`quick_shape`] with a wrapper token learned for the file.
#[inline]
pub fn quick_shape_with(line: &[u8], learned: Option<&[u8]>) -> Option<(Shape, Option<u64>)> {
    match learned {
        Some(t) if line.starts_with(t) => parse_head_with(line, learned)
            .prefix
            .map(|p| (p.shape, p.stamp.mono_us)),
        _ => quick_shape(line),
    }
}

/// Peels launcher and collector wrappers (see [`wrapper`]), then reads the prefix.
pub fn parse_head(line: &[u8]) -> LineHead<'_> {
    parse_head_with(line, None)
}

/// [`parse_head`] with a wrapper token learned for the file ([`wrapper::FileWrappers`]).
pub fn parse_head_with<'a>(line: &'a [u8], learned: Option<&[u8]>) -> LineHead<'a> {
    let w = wrapper::peel_with(line, learned);
    // a pod named by kubectl --prefix is the host of its processes (their hostname)
    let (mut off, mut rank, mut host) = (w.off, w.rank, w.host.or(w.pod));
    let mut wrapped = w.layers > 0;
    let mut prefix = parse_prefix(&line[off..]);
    if prefix.is_none() {
        // pdsh/clush `host: ` only when a known line shape follows it
        if let Some((h, n)) = wrapper::host_colon(&line[off..]) {
            let inner = wrapper::peel(&line[off + n..]);
            if let Some(p) = parse_prefix(&line[off + n + inner.off..]) {
                off += n + inner.off;
                host = Some(h);
                rank = inner.rank.or(rank);
                wrapped = true;
                prefix = Some(p);
            }
        }
    }
    match &mut prefix {
        Some(p) => {
            p.msg_start += off;
            if p.stamp.is_empty() {
                p.stamp.wall = w.stamp;
            }
        }
        None if w.stamp.is_some() => {
            prefix = Some(Prefix {
                stamp: LineStamp {
                    wall: w.stamp,
                    mono_us: None,
                    tod_us: None,
                },
                host: None,
                msg_start: off,
                shape: Shape::JobBracket,
            })
        }
        None => {}
    }
    LineHead {
        prefix,
        rank,
        msg_start: prefix.map_or(off, |p| p.msg_start),
        host,
        wrapped,
        peeled: off,
    }
}

/// The input formats of the public contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Kernel ring buffer (dmesg in any time format, /dev/kmsg).
    Dmesg,
    /// Syslog files.
    Syslog,
    /// journalctl text.
    Journal,
    /// journalctl's structured outputs: `-o json`, `json-seq`, `json-sse`, `json-pretty`,
    /// `export`, `verbose`.
    JournalJson,
    /// nvidia-bug-report.log.
    BugReport,
    /// nvidia-smi -q (text or XML).
    NvidiaSmi,
    /// dcgmi diag.
    Dcgmi,
    /// NVIDIA Fabric Manager log.
    FabricManager,
    /// NCCL debug output.
    Nccl,
    /// PyTorch/DeepSpeed/Megatron/torchrun/Slurm output.
    Trainer,
    /// Anything else (still scanned).
    Unknown,
}

impl Format {
    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Dmesg => "dmesg",
            Format::Syslog => "syslog",
            Format::Journal => "journal",
            Format::JournalJson => "journal_json",
            Format::BugReport => "bug_report",
            Format::NvidiaSmi => "nvidia_smi",
            Format::Dcgmi => "dcgmi",
            Format::FabricManager => "fabric_manager",
            Format::Nccl => "nccl",
            Format::Trainer => "trainer",
            Format::Unknown => "unknown",
        }
    }
}

/// Decides an input's format from its first lines.
pub fn detect(head: &[u8]) -> Format {
    let window = &head[..head.len().min(64 * 1024)];
    if let Some(f) = by_signature(window) {
        return f;
    }
    let t = HeadTally::of(window);
    if t.total == 0 {
        return Format::Unknown;
    }
    if t.json * 2 >= t.total || journal_entries::detect(window).is_some() {
        return Format::JournalJson;
    }
    if t.table * 2 >= t.total && dcgmi::looks_like(window) {
        return Format::Dcgmi;
    }
    let best = (0..SHAPES)
        .max_by_key(|&i| (t.shapes[i], usize::MAX - i))
        .unwrap_or(0);
    let best_count = t.shapes[best];
    if t.nccl * 3 >= t.total && t.nccl >= best_count {
        return Format::Nccl;
    }
    // kernel text without prefixes (`dmesg --time-format notime`, copied from a terminal)
    if best_count * 4 < t.total && t.bare_kernel * 3 >= t.total {
        return Format::Dmesg;
    }
    if best_count * 4 < t.total {
        return if t.trainer > 0 {
            Format::Trainer
        } else {
            Format::Unknown
        };
    }
    Shape::ALL
        .into_iter()
        .find(|s| *s as usize == best)
        .map_or(Format::Unknown, |s| s.format(t.journal_markers > 0))
}

/// The formats told by a signature of their own (a bug report's banner, nvidia-smi's and dcgmi's
/// keys) rather than by their lines' prefixes.
fn by_signature(window: &[u8]) -> Option<Format> {
    if bug_report::looks_like(window) {
        Some(Format::BugReport)
    } else if nvidia_smi::looks_like(window)
        || nvidia_smi_xml::looks_like(window)
        || topo::looks_like(window)
        || nvlink::looks_like(window)
    {
        Some(Format::NvidiaSmi)
    } else if dcgmi::looks_like_json(window) {
        Some(Format::Dcgmi)
    } else {
        None
    }
}

/// What the first 400 non-blank lines of an input look like.
#[derive(Default)]
struct HeadTally {
    /// Lines per prefix shape.
    shapes: [usize; SHAPES],
    /// Non-blank lines.
    total: usize,
    /// Journal boot separators.
    journal_markers: usize,
    /// journal JSON objects.
    json: usize,
    /// Table rows (`|`, `+--`).
    table: usize,
    /// NCCL lines.
    nccl: usize,
    /// Trainer lines (`[rank`, tracebacks, torch).
    trainer: usize,
    /// Kernel messages without a prefix.
    bare_kernel: usize,
}

impl HeadTally {
    fn of(window: &[u8]) -> HeadTally {
        let mut t = HeadTally::default();
        for line in window.split(|&c| c == b'\n').take(400) {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !line.trim_ascii().is_empty() {
                t.add(line);
            }
        }
        t
    }

    fn add(&mut self, line: &[u8]) {
        let has = |needle: &[u8]| memchr::memmem::find(line, needle).is_some();
        self.total += 1;
        self.journal_markers += journal::is_marker(line) as usize;
        self.json += (line.first() == Some(&b'{') && has(b"\"MESSAGE\"")) as usize;
        self.table += (line.first() == Some(&b'|') || line.starts_with(b"+--")) as usize;
        self.nccl += has(b" NCCL ") as usize;
        self.trainer += (line.starts_with(b"[rank")
            || line.starts_with(b"Traceback")
            || has(b"torch")) as usize;
        if let Some(p) = parse_head(line).prefix {
            self.shapes[p.shape as usize] += 1;
        } else if kernel::is_bare_message(line) {
            self.bare_kernel += 1;
        }
    }
}

impl Shape {
    /// Every shape, in declaration order (its index is `shape as usize`).
    pub const ALL: [Shape; SHAPES] = [
        Shape::DmesgRaw,
        Shape::DmesgCtime,
        Shape::DmesgIso,
        Shape::Kmsg,
        Shape::Syslog,
        Shape::SyslogIso,
        Shape::Syslog5424,
        Shape::Talos,
        Shape::JournalFull,
        Shape::JournalUnix,
        Shape::JobBracket,
        Shape::C10,
        Shape::FabricManager,
        Shape::Nccl,
        Shape::Sel,
        Shape::Package,
        Shape::DmesgRel,
        Shape::DmesgDelta,
    ];

    /// The format of an input whose lines mostly have this shape (`journal`: boot separators
    /// were seen, so RFC 3164 lines are journal short output).
    fn format(self, journal: bool) -> Format {
        match self {
            Shape::DmesgRaw
            | Shape::DmesgCtime
            | Shape::DmesgIso
            | Shape::Kmsg
            | Shape::DmesgRel
            | Shape::DmesgDelta => Format::Dmesg,
            Shape::Syslog | Shape::SyslogIso if journal => Format::Journal,
            Shape::Syslog | Shape::SyslogIso | Shape::Syslog5424 | Shape::Talos => Format::Syslog,
            Shape::JournalFull | Shape::JournalUnix => Format::Journal,
            Shape::FabricManager => Format::FabricManager,
            Shape::Nccl => Format::Nccl,
            Shape::JobBracket | Shape::C10 => Format::Trainer,
            // the contract's formats name no BMC or package log
            Shape::Sel | Shape::Package => Format::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_is_listed_at_its_index() {
        for (i, s) in Shape::ALL.into_iter().enumerate() {
            assert_eq!(s as usize, i, "{s:?}");
        }
    }

    #[test]
    fn bare_and_delta_kernel_text_is_a_kernel_log() {
        let bare = b"NVRM: GPU at PCI:0000:3b:00: GPU-509665ad-b600-ac93-3616-d754b23d636d\n\
NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.\n\
kernel: NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n";
        assert_eq!(detect(bare), Format::Dmesg);
        let delta = b"[<    0.000000>] Linux version 6.8.0\n[<    0.000127>] NVRM: loading\n";
        assert_eq!(detect(delta), Format::Dmesg);
        let both = b"[    0.000000 <    0.000000>] Linux version 6.8.0\n[    1.000127 <    1.000127>] NVRM: loading\n";
        assert_eq!(detect(both), Format::Dmesg);
        assert_eq!(
            detect(b"epoch 1 loss 0.5\nepoch 2 loss 0.4\n"),
            Format::Unknown
        );
    }

    #[test]
    fn detects_kernel_and_job_formats() {
        assert_eq!(
            detect(b"[    0.000000] Linux version 5.15\n[    0.000001] Command line: x\n"),
            Format::Dmesg
        );
        assert_eq!(
            detect(b"Jan  5 06:18:52 atom kernel: x\nJan  5 06:18:53 atom sshd[1]: y\n"),
            Format::Syslog
        );
        assert_eq!(
            detect(b"-- Boot 0123 --\nJan 05 06:18:52 atom kernel: x\n"),
            Format::Journal
        );
        assert_eq!(
            detect(b"{\"MESSAGE\":\"x\",\"__REALTIME_TIMESTAMP\":\"1\"}\n"),
            Format::JournalJson
        );
        assert_eq!(
            detect(b"node1:1:2 [0] NCCL INFO Bootstrap\nnode1:1:2 [0] NCCL INFO x\n"),
            Format::Nccl
        );
        assert_eq!(
            detect(b"[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog\n"),
            Format::Trainer
        );
        assert_eq!(detect(b"hello\nworld\n"), Format::Unknown);
        assert_eq!(detect(b""), Format::Unknown);
    }

    #[test]
    fn iso_lines_pick_dmesg_or_syslog_by_separator() {
        let p = parse_prefix(b"2025-01-21T04:41:44,283302+00:00 pcieport 0000:00:02.0: AER: x")
            .unwrap();
        assert_eq!(p.shape, Shape::DmesgIso);
        let p = parse_prefix(b"2025-01-21T04:41:44.283302+00:00 gpu1 kernel: AER: x").unwrap();
        assert_eq!(p.shape, Shape::SyslogIso);
    }
}
