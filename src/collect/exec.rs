//! Runs one command of the capture: looked up on PATH (never through a shell), stdin closed,
//! in a process group of its own that is killed whole at the timeout, stdout read up to a cap
//! (the process group is killed once the cap is reached), a little of stderr kept to tell why
//! it failed. The children inherit the capture's low CPU and I/O priority ([`lower_priority`]).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Bytes of stderr kept to explain a failure.
const STDERR_KEPT: u64 = 4096;

/// Where commands are looked for after PATH: the system folders a non-root PATH often lacks.
const SYSTEM_DIRS: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// What running a command gave.
#[derive(Debug, Default)]
pub struct Ran {
    /// Stdout, up to the cap.
    pub out: Vec<u8>,
    /// The start of stderr.
    pub err: Vec<u8>,
    /// Exit code (None when killed by a signal or never started).
    pub status: Option<i32>,
    /// Killed at the timeout.
    pub timed_out: bool,
    /// Stdout reached the cap (the rest was not read).
    pub truncated: bool,
    /// The program was not found.
    pub not_found: bool,
    /// It could not be started (the error).
    pub spawn_error: Option<String>,
    /// Wall time.
    pub elapsed: Duration,
}

/// The program's path: the first executable file of that name in PATH, then in the system
/// folders; `None` when there is none.
pub fn which(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .chain(SYSTEM_DIRS.iter().map(PathBuf::from));
    for d in dirs {
        let p = d.join(program);
        if let Ok(m) = std::fs::metadata(&p) {
            if m.is_file() && m.permissions().mode() & 0o111 != 0 {
                return Some(p);
            }
        }
    }
    None
}

/// Lowers this process's CPU priority (nice 10) and I/O priority (idle class); the commands
/// it starts inherit both. Best effort: a failure changes nothing else.
pub fn lower_priority() {
    // SAFETY: plain system calls on this process, no memory is shared with them
    unsafe {
        let now = libc::getpriority(libc::PRIO_PROCESS, 0);
        if now < 10 {
            libc::setpriority(libc::PRIO_PROCESS, 0, 10);
        }
        // ioprio_set(IOPRIO_WHO_PROCESS, self, IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT)
        libc::syscall(libc::SYS_ioprio_set, 1, 0, 3 << 13);
    }
}

/// Reads at most `cap` bytes of `r`; true when more was there.
fn read_capped(mut r: impl Read, cap: u64) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let _ = (&mut r).take(cap).read_to_end(&mut out);
    let mut one = [0u8; 1];
    let more = out.len() as u64 == cap && matches!(r.read(&mut one), Ok(1));
    (out, more)
}

/// Kills the process group `pgid`.
fn kill_group(pgid: u32) {
    if let Ok(p) = i32::try_from(pgid) {
        if p > 1 {
            // SAFETY: a signal to a process group this capture created
            unsafe {
                libc::kill(-p, libc::SIGKILL);
            }
        }
    }
}

/// Runs `program` (already found) with `args` for at most `timeout`, keeping `cap` bytes of
/// its stdout. Environment: the caller's, with `LC_ALL=C` so that outputs read the same
/// everywhere.
pub fn run(program: &Path, args: &[String], timeout: Duration, cap: u64) -> Ran {
    let start = Instant::now();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Ran {
                not_found: e.kind() == std::io::ErrorKind::NotFound,
                spawn_error: Some(e.to_string()),
                elapsed: start.elapsed(),
                ..Ran::default()
            }
        }
    };
    let pgid = child.id();
    let (out_tx, out_rx) = std::sync::mpsc::channel();
    if let Some(so) = child.stdout.take() {
        std::thread::spawn(move || {
            let r = read_capped(so, cap);
            if r.1 {
                // the cap is reached: the rest is not wanted, and the writer must not block
                kill_group(pgid);
            }
            let _ = out_tx.send(r);
        });
    }
    let (err_tx, err_rx) = std::sync::mpsc::channel();
    if let Some(se) = child.stderr.take() {
        std::thread::spawn(move || {
            let _ = err_tx.send(read_capped(se, STDERR_KEPT).0);
        });
    }
    let deadline = start + timeout;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s.code(),
            Ok(None) if Instant::now() >= deadline => {
                timed_out = true;
                kill_group(pgid);
                break child.wait().ok().and_then(|s| s.code());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break None,
        }
    };
    // what the group left behind (a child that forked and kept the pipes) goes too
    kill_group(pgid);
    let grace = Duration::from_millis(500);
    let (out, truncated) = out_rx.recv_timeout(grace).unwrap_or_default();
    let err = err_rx.recv_timeout(grace).unwrap_or_default();
    Ran {
        out,
        err,
        status: if timed_out { None } else { status },
        timed_out,
        truncated,
        not_found: false,
        spawn_error: None,
        elapsed: start.elapsed(),
    }
}
