//! Writing results: to stdout or atomically to a file that is never an input.

use std::io::Write;
use std::process::ExitCode;

/// True when `target` (an existing path) is one of the inputs or lies inside an input folder:
/// the same path once symbolic links are resolved, or the same file through a hard link.
fn is_input(target: &std::path::Path, inputs: &[String]) -> bool {
    let Ok(t) = target.canonicalize() else {
        return false;
    };
    #[cfg(unix)]
    let t_id = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&t).ok().map(|m| (m.dev(), m.ino()))
    };
    inputs.iter().any(|i| {
        let (ip, _) = faultline::input::split_host(i);
        let Ok(c) = std::path::Path::new(&ip).canonicalize() else {
            return false;
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let same_file = std::fs::metadata(&c)
                .ok()
                .is_some_and(|m| m.is_file() && Some((m.dev(), m.ino())) == t_id);
            if same_file {
                return true;
            }
        }
        t == c || t.starts_with(&c)
    })
}

/// The path of the temp file being written, for the SIGINT/SIGTERM handler to remove; null when
/// there is none. The C string is leaked on purpose (one per name tried, usually one per run):
/// the handler may read it at any time.
static TEMP_FILE: std::sync::atomic::AtomicPtr<libc::c_char> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

extern "C" fn remove_temp_and_die(sig: libc::c_int) {
    let p = TEMP_FILE.swap(std::ptr::null_mut(), std::sync::atomic::Ordering::SeqCst);
    // only async-signal-safe calls: unlink, signal, raise
    unsafe {
        if !p.is_null() {
            libc::unlink(p);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Installs the handler that removes the temp file on SIGINT, SIGTERM, SIGHUP and SIGXFSZ (a
/// write past `ulimit -f`) (once).
fn guard_temp_file(tmp: &std::path::Path) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGXFSZ] {
            // SAFETY: the handler only makes async-signal-safe calls
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = remove_temp_and_die as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(tmp.as_os_str().as_bytes()).ok();
    let ptr = c.map_or(std::ptr::null_mut(), std::ffi::CString::into_raw);
    TEMP_FILE.store(ptr, std::sync::atomic::Ordering::SeqCst);
}

/// The temp file is gone or renamed: the handler has nothing to remove.
fn release_temp_file() {
    TEMP_FILE.store(std::ptr::null_mut(), std::sync::atomic::Ordering::SeqCst);
}

/// When the results go to stdout and stdout is a pipe or a socket, a thread that ends the
/// process as soon as the reader is gone (`scan | head`): a scan writes its results at the end,
/// and would otherwise go on for minutes for no one.
pub(super) fn stop_when_reader_gone(path: Option<&str>) {
    if output_path(path).is_some() {
        return;
    }
    // SAFETY: fstat on fd 1 into a zeroed struct
    let piped = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(1, &mut st) == 0
            && matches!(st.st_mode & libc::S_IFMT, libc::S_IFIFO | libc::S_IFSOCK)
    };
    if !piped {
        return;
    }
    let _ = std::thread::Builder::new()
        .name("stdout-reader".into())
        .spawn(|| loop {
            let mut p = libc::pollfd {
                fd: 1,
                events: 0,
                revents: 0,
            };
            // SAFETY: one pollfd, valid for the call; POLLERR/POLLHUP are always reported
            let n = unsafe { libc::poll(&mut p, 1, 200) };
            if n > 0 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                std::process::exit(0);
            }
            if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return;
            }
        });
}

/// `-o -` is stdout, as no `-o` at all.
pub(super) fn output_path(o: Option<&str>) -> Option<&str> {
    o.filter(|p| *p != "-")
}

/// The extension of `-o FILE`, lower-cased.
pub(super) fn extension(output: Option<&str>) -> Option<String> {
    let p = std::path::Path::new(output_path(output)?);
    Some(p.extension()?.to_str()?.to_ascii_lowercase())
}

/// Writes the output: to stdout (no `-o`, or `-o -`), or to FILE atomically — a new temp file
/// beside it (created exclusively, so that nothing planted at its name is followed), flushed to
/// disk, then renamed over FILE. FILE is never an input (nor inside an input folder), and when
/// it exists it must be a regular file: a device, a FIFO, a socket, a folder or a symbolic link
/// is refused (rename would replace it with a file; use `-o -` or a shell redirection to write
/// into it). On any error, and on SIGINT/SIGTERM/SIGHUP, the temp file is removed and FILE is
/// left as it was.
pub(super) fn write_output(
    path: Option<&str>,
    text: &str,
    inputs: &[String],
) -> std::io::Result<()> {
    write_output_with(path, inputs, |w| w.write_all(text.as_bytes()))
}

/// [`write_output`] with the content streamed by `write` (through a buffer) instead of held in
/// one string: a large JSON report is serialized straight into its destination.
pub(super) fn write_output_with(
    path: Option<&str>,
    inputs: &[String],
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let Some(p) = output_path(path) else {
        let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        write(&mut out)?;
        return out.flush();
    };
    let target = std::path::Path::new(p);
    check_target(p, target, inputs)?;
    // the temp file's handler is set up (see `create_temp`); it is released on every path
    let (tmp, file) = create_temp(target)?;
    let mut buf = std::io::BufWriter::with_capacity(1 << 16, file);
    let written = write(&mut buf)
        .and_then(|_| buf.into_inner().map_err(|e| e.into_error()))
        .and_then(|f| f.sync_all())
        .map(|_| hold_for_tests())
        .and_then(|_| std::fs::rename(&tmp, target));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    release_temp_file();
    written
}

/// Refuses an output path that is an input, a symbolic link, or not a regular file.
fn check_target(p: &str, target: &std::path::Path, inputs: &[String]) -> std::io::Result<()> {
    if is_input(target, inputs) {
        return Err(std::io::Error::other(format!(
            "refusing to write over an input: {p}"
        )));
    }
    if let Ok(m) = std::fs::symlink_metadata(target) {
        let t = m.file_type();
        if t.is_symlink() {
            return Err(std::io::Error::other(format!(
                "refusing to replace a symbolic link: {p} (name its target, or use -o - with a redirection)"
            )));
        }
        if !t.is_file() {
            return Err(std::io::Error::other(format!(
                "refusing to replace what is not a regular file (device, FIFO, socket or folder): {p} (use -o - with a redirection to write into it)"
            )));
        }
    }
    Ok(())
}

/// A new temp file beside `target` (a name no other file has), with the signal handler that
/// removes it set up; the caller releases the handler.
fn create_temp(target: &std::path::Path) -> std::io::Result<(std::path::PathBuf, std::fs::File)> {
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("report");
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last_err = None;
    for attempt in 0..16u32 {
        let tmp = dir.join(format!(
            ".{name}.faultline-tmp-{}-{stamp:08x}-{attempt}",
            std::process::id()
        ));
        // the handler knows the name before the file exists: a signal between the creation
        // and the handler's set-up (a busy machine can stop a process there for a while) would
        // leave the file behind; one that comes before the creation unlinks a name that is not
        // there yet (or a file planted at it, which this run would not have written into anyway)
        guard_temp_file(&tmp);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                release_temp_file();
                last_err = Some(e);
            }
            Err(e) => {
                release_temp_file();
                return Err(e);
            }
        }
    }
    Err(last_err.unwrap_or_else(|| std::io::Error::other("no temp file name left")))
}

/// Tests only (tests/output.rs): `FAULTLINE_TEST_HOLD_TEMP_MS` keeps the written temp file
/// that long before the rename, so that a signal can be sent while it exists.
fn hold_for_tests() {
    if let Some(ms) = std::env::var("FAULTLINE_TEST_HOLD_TEMP_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms.min(10_000)));
    }
}

/// Writes `bytes` to stdout; a closed pipe (`faultline explain xid 79 | head -1`) is not an error.
pub(super) fn print_stdout(bytes: &[u8]) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("faultline: cannot write to stdout: {e}");
            ExitCode::from(2)
        }
        _ => ExitCode::SUCCESS,
    }
}
