//! One capture: the items of the table run several at a time within the total budget, each
//! through its sources in order; then the manifest and the members are written, in table order,
//! into the `.tar.zst`.

use super::exec;
use super::items::{Item, OptIn, Src, ITEMS};
use super::manifest::{ItemRecord, Manifest, Missing, MEMBER, SCHEMA};
use super::sources::run_source;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a capture is asked for.
#[derive(Clone)]
pub struct Options {
    /// The bundle file, `-` for stdout.
    pub output: PathBuf,
    /// Job logs to include.
    pub job_logs: Vec<PathBuf>,
    /// Job logs must belong to this user (the job's owner, in a root epilog).
    pub job_log_uid: Option<u32>,
    /// `--since`: the span, as given, and in seconds (journal items only).
    pub since: Option<(String, u64)>,
    /// The redaction key, when every member must be redacted.
    pub redact: Option<crate::redact::Key>,
    /// Opt-in items.
    pub with: Vec<OptIn>,
    /// Total time for the items that are not opt-in.
    pub budget: Duration,
    /// Items run at a time.
    pub workers: usize,
    /// Where the AER counters are read (`/sys/bus/pci/devices`).
    pub pci_root: PathBuf,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            output: PathBuf::from("-"),
            job_logs: Vec::new(),
            job_log_uid: None,
            since: None,
            redact: None,
            with: Vec::new(),
            budget: Duration::from_secs(25),
            workers: 6,
            pci_root: PathBuf::from("/sys/bus/pci/devices"),
        }
    }
}

/// What a capture wrote.
#[derive(Debug)]
pub struct Summary {
    /// The manifest written.
    pub manifest: Manifest,
    /// Bytes of the bundle file.
    pub bytes: u64,
    /// Members written (the manifest included).
    pub members: usize,
}

/// What one item gave.
struct Outcome {
    record: ItemRecord,
    members: Vec<(String, Vec<u8>)>,
}

/// What the items of a run share.
pub(super) struct Ctx<'a> {
    pub(super) opts: &'a Options,
    start: Instant,
    /// File patterns already taken, by the item that took them.
    pub(super) taken: Mutex<BTreeMap<&'static str, &'static str>>,
}

impl Ctx<'_> {
    /// The time an item may still use: its timeout within the run's budget.
    pub(super) fn timeout(&self, item: &Item) -> Duration {
        let end = match item.opt_in {
            Some(_) => self.opts.budget + Duration::from_secs(item.timeout_s),
            None => self.opts.budget,
        };
        let left = end.saturating_sub(self.start.elapsed());
        left.min(Duration::from_secs(item.timeout_s))
    }
}

/// Where one source got: data, nothing to say, or a reason.
pub(super) enum Got {
    Data {
        command: String,
        members: Vec<(String, Vec<u8>)>,
        status: Option<i32>,
        truncated: bool,
        note: Option<String>,
    },
    Covered(String),
    Empty(String),
    Missing(Missing, String),
    /// A command that ran and exited non-zero: why, and its exit status.
    Exited(Missing, String, Option<i32>),
}

/// Runs the capture and writes the bundle.
pub fn collect(opts: &Options) -> std::io::Result<Summary> {
    let start = Instant::now();
    exec::lower_priority();
    let host = host_name();
    let captured = chrono::Utc::now();
    let offset = chrono::Local::now().offset().local_minus_utc();
    let outcomes = run_items(opts, start);
    let redactor = match &opts.redact {
        Some(k) => {
            let all: Vec<(String, Vec<u8>)> = outcomes
                .iter()
                .flat_map(|o| o.members.iter().cloned())
                .collect();
            Some(super::redact::redactor(k, &host, &all).map_err(std::io::Error::other)?)
        }
        None => None,
    };
    let mut manifest = Manifest {
        schema: SCHEMA.into(),
        faultline: env!("CARGO_PKG_VERSION").into(),
        host: redactor
            .as_ref()
            .map_or_else(|| host.clone(), |r| r.host(&host)),
        captured_at: captured.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        utc_offset_s: Some(offset),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty()),
        root: unsafe_free_is_root(),
        since: opts.since.as_ref().map(|s| s.0.clone()),
        redacted: redactor.is_some(),
        duration_ms: 0,
        items: Vec::new(),
    };
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    for mut o in outcomes {
        if let Some(r) = &redactor {
            let cap = ITEMS
                .iter()
                .find(|i| i.name == o.record.name)
                .map_or(16 << 20, |i| i.cap);
            o.members = o
                .members
                .into_iter()
                .map(|(n, d)| super::redact::member(r, &n, &d, cap))
                .collect();
            o.record.members = o.members.iter().map(|m| m.0.clone()).collect();
            o.record.bytes = o.members.iter().map(|m| m.1.len() as u64).sum();
            o.record.detail = r.text(&o.record.detail);
            o.record.command = r.text(&o.record.command);
        }
        members.append(&mut o.members);
        manifest.items.push(o.record);
    }
    manifest.duration_ms = start.elapsed().as_millis() as u64;
    let bytes = write_bundle(&opts.output, &manifest, &members, captured.timestamp())?;
    Ok(Summary {
        manifest,
        bytes,
        members: members.len() + 1,
    })
}

fn unsafe_free_is_root() -> bool {
    // the effective uid, from /proc (no unsafe call needed)
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// The node's host name, as the kernel has it.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// Writes the bundle (through a hidden `.NAME.partial` beside it, renamed at the end, so that a
/// scan of the folder never reads half a bundle); returns its size.
fn write_bundle(
    out: &Path,
    manifest: &Manifest,
    members: &[(String, Vec<u8>)],
    mtime: i64,
) -> std::io::Result<u64> {
    let write = |w: &mut dyn std::io::Write| -> std::io::Result<()> {
        let mut t = super::tarzst::Writer::new(w, mtime)?;
        t.add(MEMBER, &manifest.to_bytes())?;
        for (name, data) in members {
            t.add(name, data)?;
        }
        t.finish()?.flush()
    };
    if out.as_os_str() == "-" {
        let mut counted = Counted(std::io::stdout().lock(), 0);
        write(&mut counted)?;
        return Ok(counted.1);
    }
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "bundle.tar.zst".into());
    let partial = out.with_file_name(format!(".{name}.partial"));
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let f = o.open(&partial)?;
    let mut buf = std::io::BufWriter::new(f);
    let done = write(&mut buf).and_then(|_| {
        let f = buf.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&partial, out)
    });
    if let Err(e) = done {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    Ok(std::fs::metadata(out)?.len())
}

struct Counted<W>(W, u64);

impl<W: std::io::Write> std::io::Write for Counted<W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(b)?;
        self.1 += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Runs the items of the run (the opt-in ones only when asked), `opts.workers` at a time; an
/// item marked `after_previous` runs right after the one before it, in the same worker.
fn run_items(opts: &Options, start: Instant) -> Vec<Outcome> {
    let chosen: Vec<(usize, &'static Item)> = ITEMS
        .iter()
        .enumerate()
        .filter(|(_, i)| i.opt_in.is_none_or(|o| opts.with.contains(&o)))
        .collect();
    let mut chains: Vec<Vec<(usize, &'static Item)>> = Vec::new();
    for c in chosen {
        match chains.last_mut() {
            Some(last) if c.1.after_previous => last.push(c),
            _ => chains.push(vec![c]),
        }
    }
    let ctx = Ctx {
        opts,
        start,
        taken: Mutex::default(),
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, Outcome)>> = Mutex::default();
    std::thread::scope(|s| {
        for _ in 0..opts.workers.clamp(1, chains.len().max(1)) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(chain) = chains.get(k) else { break };
                for &(i, item) in chain {
                    let o = run_item(item, &ctx);
                    done.lock().unwrap_or_else(|e| e.into_inner()).push((i, o));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|d| d.0);
    done.into_iter().map(|d| d.1).collect()
}

/// Runs one item's sources in order until one gives data.
fn run_item(item: &'static Item, ctx: &Ctx) -> Outcome {
    let t0 = Instant::now();
    let mut notes: Vec<String> = Vec::new();
    let mut reasons: Vec<Missing> = Vec::new();
    let mut first_command: Option<String> = None;
    let mut any_empty = false;
    let mut last_status = None;
    for src in item.sources {
        let got = run_source(item, src, ctx);
        first_command.get_or_insert_with(|| describe(src));
        match got {
            Got::Data {
                command,
                members,
                status,
                truncated,
                note,
            } => {
                notes.extend(note);
                return Outcome {
                    record: record(item, t0, command, &members, status, truncated, None, notes),
                    members,
                };
            }
            Got::Covered(why) => {
                notes.push(why);
                let cmd = describe(src);
                return Outcome {
                    record: record(item, t0, cmd, &[], None, false, None, notes),
                    members: Vec::new(),
                };
            }
            Got::Empty(why) => {
                any_empty = true;
                notes.push(why);
            }
            Got::Missing(m, why) => {
                reasons.push(m);
                notes.push(why);
            }
            Got::Exited(m, why, status) => {
                reasons.push(m);
                notes.push(why);
                last_status = last_status.or(status);
            }
        }
    }
    // nothing: the first reason that is not "not installed" says most
    let unit = item.sources.iter().find_map(|s| match s {
        Src::Cmd { unit, .. } => *unit,
        _ => None,
    });
    let worst = reasons
        .iter()
        .copied()
        .find(|m| *m != Missing::NotInstalled);
    let missing = match (worst, unit) {
        (Some(m), _) => Some(m),
        (None, Some(u)) if !unit_installed(u) => {
            notes.insert(0, format!("{u} is not installed (no systemd unit file)"));
            Some(Missing::NotInstalled)
        }
        // the service is there and logged nothing, or the sources ran and had nothing to say
        (None, Some(_)) => None,
        (None, None) if reasons.is_empty() && any_empty => None,
        (None, None) => Some(Missing::NotInstalled),
    };
    let cmd = first_command.unwrap_or_default();
    Outcome {
        record: record(item, t0, cmd, &[], last_status, false, missing, notes),
        members: Vec::new(),
    }
}

#[allow(clippy::too_many_arguments)]
fn record(
    item: &Item,
    t0: Instant,
    command: String,
    members: &[(String, Vec<u8>)],
    status: Option<i32>,
    truncated: bool,
    missing: Option<Missing>,
    notes: Vec<String>,
) -> ItemRecord {
    ItemRecord {
        name: item.name.into(),
        purpose: item.purpose.into(),
        command,
        members: members.iter().map(|m| m.0.clone()).collect(),
        exit_status: status,
        duration_ms: t0.elapsed().as_millis() as u64,
        bytes: members.iter().map(|m| m.1.len() as u64).sum(),
        truncated,
        missing,
        detail: notes.join("; "),
        gap: item.gap.into(),
    }
}

/// A source as the manifest names it.
pub(super) fn describe(src: &Src) -> String {
    match src {
        Src::Cmd { argv, .. } => argv.join(" "),
        Src::Files { globs, .. } => globs.join(" "),
        Src::Aer => "/sys/bus/pci/devices/*/aer_dev_*".into(),
        Src::JobLogs => "--job-log".into(),
    }
}

/// Whether systemd knows the unit (a unit file in one of its folders).
fn unit_installed(unit: &str) -> bool {
    [
        "/etc/systemd/system",
        "/run/systemd/system",
        "/lib/systemd/system",
        "/usr/lib/systemd/system",
        "/usr/local/lib/systemd/system",
    ]
    .iter()
    .any(|d| Path::new(d).join(format!("{unit}.service")).exists())
}
