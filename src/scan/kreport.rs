//! Kernel reports read as one record: a header line (hung task, soft/hard lockup, RCU stall,
//! Oops/`BUG:`, `WARNING:`) and the lines after it that belong to the report (taint and task
//! lines, `Call Trace:`, frames with or without `[<address>]`, `?` frames, raw stack words of old
//! kernels, registers, `Code:`), each line with its own timestamp or host prefix. The frames give
//! the event its details (modules, first frames where the task was) and its layer, through the
//! `[trace]` table of the recognizer data.

use crate::events::{Draft, TraceDef};
use crate::formats::{parse_head, Shape};
use crate::model::Layer;

/// The most lines a report holds after its header.
pub const MAX_REPORT_LINES: usize = 64;
/// The most frames a report's details name.
const FIRST_FRAMES: usize = 4;
/// Bytes of one report line kept as evidence.
const MAX_LINE_BYTES: usize = 512;

/// One frame of a call trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Function name (without offset and size).
    pub function: String,
    /// Module named in brackets after the frame (`nvidia_uvm`), none for built-in code.
    pub module: Option<String>,
    /// False for `?` frames (stale words on the stack, not a return address the unwinder trusts).
    pub reliable: bool,
}

/// The lines of a report after its header.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Byte offset where the report's last line ends.
    pub end: usize,
    /// Its lines after the header, verbatim (each cut at a few hundred bytes).
    pub lines: Vec<String>,
    /// Frames, innermost first.
    pub frames: Vec<Frame>,
    /// Task state of the task line (`D`).
    pub state: Option<String>,
    /// Owner of the lock the task waits on, when the detector names it.
    pub blocker: Option<String>,
}

/// What one line of a report is.
#[derive(Debug, PartialEq, Eq)]
enum Part {
    Frame(Frame),
    Task(String),
    Blocker(Option<String>),
    Detail,
}

/// Reads the report lines that follow a header ending at `end`; `shape` is the header's prefix
/// shape (lines with another prefix shape end the report). At most [`MAX_REPORT_LINES`] lines.
pub fn read(buf: &[u8], end: usize, shape: Option<Shape>) -> Report {
    let mut r = Report {
        end,
        ..Report::default()
    };
    let mut pos = end;
    for _ in 0..MAX_REPORT_LINES {
        if pos + 1 >= buf.len() {
            break;
        }
        let s = pos + 1;
        let e = memchr::memchr(b'\n', &buf[s..]).map_or(buf.len(), |p| s + p);
        let line = &buf[s..e];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let head = parse_head(line);
        let line_shape = head.prefix.map(|p| p.shape);
        if line_shape.is_some() && family(line_shape) != family(shape) {
            break;
        }
        let msg = String::from_utf8_lossy(&line[head.msg_start.min(line.len())..]);
        let Some(part) = classify(&msg) else { break };
        match part {
            Part::Frame(f) => r.frames.push(f),
            Part::Task(state) => r.state = Some(state),
            Part::Blocker(b) => r.blocker = r.blocker.take().or(b),
            Part::Detail => {}
        }
        let cut = &line[..floor(line, MAX_LINE_BYTES)];
        r.lines.push(String::from_utf8_lossy(cut).into_owned());
        r.end = e;
        pos = e;
    }
    r
}

fn floor(line: &[u8], max: usize) -> usize {
    if line.len() <= max {
        return line.len();
    }
    let mut i = max;
    while i > 0 && (line[i] & 0xC0) == 0x80 {
        i -= 1;
    }
    i
}

/// Shapes that one dmesg output mixes (`dmesg -H` prints a minute stamp, then deltas).
fn family(s: Option<Shape>) -> Option<Shape> {
    match s {
        Some(Shape::DmesgDelta) => Some(Shape::DmesgRel),
        other => other,
    }
}

/// Lines of a report that carry no frame, by how they start (after leading blanks).
const DETAIL_STARTS: &[&str] = &[
    "Tainted:",
    "Not tainted",
    "\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\"",
    "Call Trace:",
    "Call trace:",
    "<TASK>",
    "</TASK>",
    "<IRQ>",
    "</IRQ>",
    "<NMI>",
    "</NMI>",
    "<EOI>",
    "Modules linked in:",
    "CPU: ",
    "Hardware name:",
    "Code: ",
    "Workqueue: ",
    "Stack:",
    "Blocked by coredump.",
    "---[ end trace",
    "Kernel Offset:",
    "Sending NMI from CPU",
    "NMI backtrace for cpu",
    "Showing all locks held",
    "Showing busy workqueues",
    "irq event stamp:",
    "hardirqs last",
    "softirqs last",
    "#PF: ",
    "PGD ",
    "P4D ",
    "Oops: ",
    "Task dump for CPU",
    "rcu: ",
    "(detected by",
    "(t=",
    "Future hung task reports are suppressed",
    "Unless ",
    "RCU grace-period kthread stack dump:",
    "Stack dump where RCU GP kthread last ran:",
    "CPU#",
    "pstate: ",
    "Internal error: ",
    "Mem abort info:",
];

/// True when a message (after its prefix) is a line that a kernel report holds after its header:
/// a frame, the task line, taint, `Call Trace:`, registers, stack words.
pub fn is_report_line(msg: &str) -> bool {
    classify(msg).is_some()
}

/// What a report line is, or `None` when it is not part of a report.
fn classify(msg: &str) -> Option<Part> {
    let t = msg.trim_start();
    if t.is_empty() {
        return None;
    }
    if let Some(f) = frame(t) {
        return Some(Part::Frame(f));
    }
    if let Some(state) = task_state(t) {
        return Some(Part::Task(state));
    }
    if t.starts_with("INFO: task ") && t.contains("blocked on a") {
        let owner = t
            .split_once(" by task ")
            .map(|(_, o)| o.trim_end_matches(['.', ' ']).to_string());
        return Some(Part::Blocker(owner));
    }
    if msg.starts_with('\t')
        || DETAIL_STARTS.iter().any(|p| t.starts_with(p))
        || register_line(t)
        || stack_words(t)
    {
        return Some(Part::Detail);
    }
    None
}

/// `func+0x1e/0x40 [module]`, with an optional `[<ffff...>]` address, `?`, `RIP: 0010:` or
/// arm64 `pc : ` in front.
pub fn frame(t: &str) -> Option<Frame> {
    let mut s = t.trim();
    for lead in ["RIP: ", "pc : ", "lr : "] {
        if let Some(r) = s.strip_prefix(lead) {
            s = r.trim_start();
            if let Some((seg, rest)) = s.split_once(':') {
                if seg.len() == 4 && seg.bytes().all(|c| c.is_ascii_hexdigit()) {
                    s = rest;
                }
            }
        }
    }
    while let Some(r) = s.strip_prefix("[<") {
        let close = r.find(">]")?;
        s = r[close + 2..].trim_start();
    }
    let mut reliable = true;
    if let Some(r) = s.strip_prefix("? ") {
        reliable = false;
        s = r.trim_start();
    }
    let plus = s.find('+')?;
    let function = &s[..plus];
    let name_ok = !function.is_empty()
        && function
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.');
    if !name_ok {
        return None;
    }
    let rest = &s[plus + 1..];
    let (offsets, tail) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let (off, size) = offsets.split_once('/')?;
    if !hex_word(off) || !hex_word(size) {
        return None;
    }
    let tail = tail.trim();
    let module = tail
        .strip_prefix('[')
        .and_then(|m| m.split(']').next())
        .and_then(|m| m.split_whitespace().next())
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    if module.is_none() && !tail.is_empty() && !tail.starts_with('(') {
        return None;
    }
    Some(Frame {
        function: function.to_string(),
        module,
        reliable,
    })
}

fn hex_word(s: &str) -> bool {
    s.strip_prefix("0x")
        .is_some_and(|h| !h.is_empty() && h.bytes().all(|c| c.is_ascii_hexdigit()))
}

/// The task line: `task:gdscheck state:D stack:0 pid:509579 ...` (5.14+) or
/// `conda D 0 11003 2638 0x80004002` / `nvc:[driver] D ffff883f2cc43bd8 0 5403 5396 0x00000084`
/// (older kernels: name, state, [stack pointer], free stack, pid, parent pid, flags).
fn task_state(t: &str) -> Option<String> {
    if t.starts_with("task:") {
        let state = t.split_once(" state:")?.1.split_whitespace().next()?;
        return Some(state.to_string());
    }
    let words: Vec<&str> = t.split_whitespace().collect();
    let n = words.len();
    if !(5..=8).contains(&n) || !hex_word(words[n - 1]) {
        return None;
    }
    if !words[n - 4..n - 1]
        .iter()
        .all(|w| w.bytes().all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    let mut i = n - 5;
    if words[i].len() == 16 && words[i].bytes().all(|c| c.is_ascii_hexdigit()) && i > 0 {
        i -= 1;
    }
    let state = words[i];
    (i >= 1 && state.len() == 1 && state.as_bytes()[0].is_ascii_uppercase())
        .then(|| state.to_string())
}

/// Register dumps: `RAX: 0000... RBX: ...`, `FS:  0000(0000) GS:...`, `CR2: ...`.
fn register_line(t: &str) -> bool {
    let Some((name, rest)) = t.split_once(':') else {
        return false;
    };
    (2..=4).contains(&name.len())
        && name.as_bytes()[0].is_ascii_uppercase()
        && name
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && rest
            .trim_start()
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_hexdigit())
}

/// Raw stack words printed by old kernels before the trace (`ffff883f2cc43bd8 ffffffff8170e16e`).
fn stack_words(t: &str) -> bool {
    let mut n = 0;
    for w in t.split_whitespace() {
        if !(w.len() == 16 || w.len() == 8) || !w.bytes().all(|c| c.is_ascii_hexdigit()) {
            return false;
        }
        n += 1;
    }
    n > 0
}

/// Whether `function` is a way of waiting (listed in `wait_frames`).
fn is_wait(function: &str, trace: &TraceDef) -> bool {
    trace.wait_frames.iter().any(|w| {
        function == w
            || function
                .strip_prefix(w.as_str())
                .is_some_and(|r| w.ends_with('_') || r.starts_with('_'))
    })
}

impl Report {
    /// The modules named by the frames, in order of first appearance (reliable frames first).
    pub fn modules(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for reliable in [true, false] {
            for f in self.frames.iter().filter(|f| f.reliable == reliable) {
                if let Some(m) = f.module.as_deref() {
                    if !out.contains(&m) {
                        out.push(m);
                    }
                }
            }
        }
        out
    }

    /// The first frames where the task was, past the frames that say how it waits: reliable
    /// frames, else all.
    pub fn first_frames(&self, trace: &TraceDef) -> Vec<String> {
        let pick = |reliable_only: bool| -> Vec<String> {
            self.frames
                .iter()
                .filter(|f| (f.reliable || !reliable_only) && !is_wait(&f.function, trace))
                .take(FIRST_FRAMES)
                .map(|f| match &f.module {
                    Some(m) => format!("{} [{m}]", f.function),
                    None => f.function.clone(),
                })
                .collect()
        };
        let reliable = pick(true);
        if reliable.is_empty() {
            pick(false)
        } else {
            reliable
        }
    }

    /// The layer the frames point at: the first frame (reliable ones first) whose module or
    /// function is listed in the `[trace]` table; `None` when no frame is.
    pub fn layer(&self, trace: &TraceDef, process: &str) -> Option<Layer> {
        let modules = self.modules();
        for reliable in [true, false] {
            for f in self.frames.iter().filter(|f| f.reliable == reliable) {
                for l in &trace.layer {
                    let by_module = f
                        .module
                        .as_deref()
                        .is_some_and(|m| l.modules.iter().any(|x| x == m));
                    let by_function = f.module.is_none()
                        && l.functions
                            .iter()
                            .any(|p| f.function.starts_with(p.as_str()));
                    let with = l.only_with.is_empty()
                        || l.only_with
                            .iter()
                            .any(|w| modules.contains(&w.as_str()) || process.contains(w.as_str()));
                    if (by_module || by_function) && with {
                        return Some(l.layer);
                    }
                }
            }
        }
        None
    }

    /// Puts the report's details on a draft: `modules`, `frames`, `trace_lines`, `state`,
    /// `blocker`, and the layer the frames point at (`unknown` when none is known), unless the
    /// recognizer fixed one.
    pub fn annotate(&self, d: &mut Draft, trace: &TraceDef) {
        let modules = self.modules();
        if !modules.is_empty() {
            d.attrs.insert("modules", modules.join(", "));
        }
        let first = self.first_frames(trace);
        if !first.is_empty() {
            d.attrs.insert("frames", first.join(" < "));
        }
        d.attrs.insert("trace_lines", self.lines.len().to_string());
        if let Some(s) = &self.state {
            d.attrs.insert("state", s.clone());
        }
        if let Some(b) = &self.blocker {
            d.attrs.insert("blocker", b.clone());
        }
        if d.layer.is_none() {
            let process = d.attrs.get("process").unwrap_or("");
            d.layer = Some(self.layer(trace, process).unwrap_or(Layer::Unknown));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> crate::events::RecognizerSet {
        crate::events::RecognizerSet::load(&[]).expect("builtin recognizers")
    }

    #[test]
    fn frames_of_both_styles() {
        let f =
            frame("[<ffffffffa09c376e>] uvm_gpu_retain_by_uuid+0x1e/0x40 [nvidia_uvm]").unwrap();
        assert_eq!(f.function, "uvm_gpu_retain_by_uuid");
        assert_eq!(f.module.as_deref(), Some("nvidia_uvm"));
        assert!(f.reliable);
        let f = frame("? _nv052958rm+0x2cc/0x360 [nvidia]").unwrap();
        assert!(!f.reliable);
        let f = frame("[<ffffffff8112931f>] ? __audit_syscall_entry+0xaf/0x100").unwrap();
        assert_eq!(
            (f.function.as_str(), f.reliable),
            ("__audit_syscall_entry", false)
        );
        let f = frame("RIP: 0010:os_dump_stack+0xe/0x14 [nvidia 7c3f0a1b]").unwrap();
        assert_eq!(f.module.as_deref(), Some("nvidia"));
        assert!(frame("schedule at the end of the day").is_none());
        assert!(frame("a+b/c").is_none());
    }

    #[test]
    fn task_lines_of_every_era() {
        assert_eq!(
            task_state(
                "task:gdscheck        state:D stack:    0 pid:509579 ppid: 11174 flags:0x00000006"
            ),
            Some("D".into())
        );
        assert_eq!(
            task_state("conda           D    0 11003   2638 0x80004002"),
            Some("D".into())
        );
        assert_eq!(
            task_state("nvc:[driver]    D ffff883f2cc43bd8     0  5403   5396 0x00000084"),
            Some("D".into())
        );
        assert_eq!(task_state("1 2 3 4 0x5"), None);
    }

    #[test]
    fn old_kernel_report_is_one_record() {
        let text =
            "[  721.028170] INFO: task nvc:[driver]:5403 blocked for more than 120 seconds.\n\
[  721.028229]       Tainted: P           O    4.4.146-1.el7.elrepo.x86_64 #1\n\
[  721.028273] \"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.\n\
[  721.028323] nvc:[driver]    D ffff883f2cc43bd8     0  5403   5396 0x00000084\n\
[  721.028331]  ffff883f2cc43bd8 ffffffff8170e16e ffff883f33d62c80 ffff883f2cc44000\n\
[  721.028346] Call Trace:\n\
[  721.028360]  [<ffffffff8170e16e>] ? schedule_preempt_disabled+0xe/0x10\n\
[  721.028368]  [<ffffffff8170de85>] schedule+0x35/0x80\n\
[  721.028379]  [<ffffffff8170fca4>] __mutex_lock_slowpath+0xb4/0x130\n\
[  721.028383]  [<ffffffff8170fd3f>] mutex_lock+0x1f/0x2f\n\
[  721.028422]  [<ffffffffa09c376e>] uvm_gpu_retain_by_uuid+0x1e/0x40 [nvidia_uvm]\n\
[  722.000000] eth0: link up\n";
        let end = text.find('\n').unwrap();
        let r = read(text.as_bytes(), end, Some(Shape::DmesgRaw));
        assert_eq!(r.lines.len(), 10);
        assert_eq!(r.state.as_deref(), Some("D"));
        let s = set();
        assert_eq!(r.modules(), vec!["nvidia_uvm"]);
        assert_eq!(
            r.first_frames(&s.trace),
            vec!["uvm_gpu_retain_by_uuid [nvidia_uvm]".to_string()]
        );
        assert_eq!(r.layer(&s.trace, "nvc:[driver]"), Some(Layer::DriverStack));
        assert!(text[..r.end].ends_with("[nvidia_uvm]"));
    }

    #[test]
    fn storage_and_unknown_layers() {
        let s = set();
        let rep = |frames: &[(&str, Option<&str>)]| Report {
            frames: frames
                .iter()
                .map(|(f, m)| Frame {
                    function: f.to_string(),
                    module: m.map(str::to_string),
                    reliable: true,
                })
                .collect(),
            ..Report::default()
        };
        let nfs = rep(&[
            ("schedule", None),
            ("rpc_wait_bit_killable", Some("sunrpc")),
        ]);
        assert_eq!(nfs.layer(&s.trace, "python"), Some(Layer::NetworkStorage));
        let ext4 = rep(&[("jbd2_log_wait_commit", Some("jbd2"))]);
        assert_eq!(ext4.layer(&s.trace, "python"), None);
        assert_eq!(
            ext4.layer(&s.trace, "jbd2/nbd0-8"),
            Some(Layer::NetworkStorage)
        );
        let mm = rep(&[
            ("io_schedule", None),
            ("folio_wait_bit", None),
            ("filemap_fault", None),
        ]);
        assert_eq!(mm.layer(&s.trace, "python"), None);
        assert_eq!(mm.first_frames(&s.trace), vec!["filemap_fault".to_string()]);
    }
}
