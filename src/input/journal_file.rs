//! Binary systemd journal files (`*.journal`): read through the local `journalctl --file … -o export`
//! when the command is there, so their entries are analyzed like any export; otherwise a warning
//! says how to export them on a machine with systemd.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// The journal's entries in the export format, or the warning to give instead.
///
/// The bytes are written to a private temporary file (0600, created exclusively, removed
/// afterwards; never beside the input) because `journalctl --file` needs a seekable file, and at
/// most `max_bytes` of its output are kept.
pub fn export(display: &str, bytes: &[u8], max_bytes: u64) -> Result<Vec<u8>, String> {
    let how = format!(
        "binary systemd journal file: not parsed; export it where systemd is installed with \
         `journalctl --file {display} -o export > {display}.export` (or `-o json`) and give that file"
    );
    let Some(tmp) = TempJournal::create(bytes) else {
        return Err(format!(
            "{how} (no temporary file could be written for `journalctl`)"
        ));
    };
    let child = Command::new("journalctl")
        .arg("--file")
        .arg(&tmp.0)
        .args(["-o", "export", "--no-pager"])
        .env("SYSTEMD_COLORS", "0")
        .env("SYSTEMD_PAGER", "")
        .env("SYSTEMD_LOG_LEVEL", "err")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("{how} (`journalctl` is not installed here)"))
        }
        Err(e) => return Err(format!("{how} (`journalctl` could not be run: {e})")),
    };
    let mut out = Vec::new();
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let errs = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = (&mut stderr).take(4096).read_to_end(&mut s);
        s
    });
    let read = (&mut stdout).take(max_bytes).read_to_end(&mut out);
    let capped = out.len() as u64 >= max_bytes;
    if capped {
        let _ = child.kill();
    }
    drop(stdout);
    let status = child.wait();
    let errs = errs.join().unwrap_or_default();
    let said = String::from_utf8_lossy(&errs);
    let said: String = said
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    match (read, status) {
        (Ok(_), Ok(st)) if st.success() || capped || !out.is_empty() => Ok(out),
        (Err(e), _) => Err(format!("{how} (reading `journalctl` output failed: {e})")),
        (_, Err(e)) => Err(format!("{how} (`journalctl` failed: {e})")),
        (_, Ok(st)) => Err(format!(
            "{how} (`journalctl --file` could not read it: {}{})",
            st,
            if said.is_empty() {
                String::new()
            } else {
                format!(": {said}")
            }
        )),
    }
}

/// A temporary copy of the journal, removed on drop.
struct TempJournal(std::path::PathBuf);

impl TempJournal {
    fn create(bytes: &[u8]) -> Option<TempJournal> {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = std::env::temp_dir();
        for attempt in 0..16u32 {
            let name = format!(
                "faultline-{}-{}-{attempt}.journal",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.subsec_nanos())
            );
            let path = dir.join(name);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path);
            match file {
                Ok(mut f) => {
                    let guard = TempJournal(path);
                    f.write_all(bytes).ok()?;
                    return Some(guard);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(_) => return None,
            }
        }
        None
    }
}

impl Drop for TempJournal {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
