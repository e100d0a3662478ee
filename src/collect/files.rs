//! Reads the files of the capture without following symbolic links out of the paths asked for:
//! a pattern's matches that are links are skipped, a file is opened with `O_NOFOLLOW` and must
//! be a regular file, and a job log given by path must have no link anywhere in its path (a job
//! owner could otherwise point its output at any file the root epilog can read).

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// One file read.
#[derive(Debug)]
pub struct Read1 {
    /// Its path.
    pub path: PathBuf,
    /// Its bytes, up to the cap.
    pub bytes: Vec<u8>,
    /// Cut at the cap.
    pub truncated: bool,
    /// Modification time (seconds since the epoch).
    pub mtime: Option<i64>,
    /// The owner's user id (of the file opened, not of a path looked up again).
    pub uid: u32,
}

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// It does not exist.
    Absent,
    /// Permission denied.
    Permission(String),
    /// A symbolic link, or not a regular file.
    NotPlain(String),
    /// Another error.
    Other(String),
}

/// The paths matching `glob` (at most one `*`, inside one component), sorted; entries that are
/// symbolic links are left out, and so are hidden names.
pub fn expand(glob: &str) -> Vec<PathBuf> {
    let Some(star) = glob.find('*') else {
        return vec![PathBuf::from(glob)];
    };
    let dir_end = glob[..star].rfind('/').map_or(0, |i| i + 1);
    let rest_start = glob[star..].find('/').map_or(glob.len(), |i| star + i);
    let dir = &glob[..dir_end];
    let (prefix, suffix) = (&glob[dir_end..star], &glob[star + 1..rest_start]);
    let rest = &glob[rest_start..];
    let Ok(entries) = std::fs::read_dir(if dir.is_empty() { "." } else { dir }) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            !n.starts_with('.')
                && n.len() >= prefix.len() + suffix.len()
                && n.starts_with(prefix)
                && n.ends_with(suffix)
                && e.file_type().is_ok_and(|t| !t.is_symlink())
        })
        .map(|e| PathBuf::from(format!("{}{}", e.path().display(), rest)))
        .collect();
    out.sort();
    out
}

/// Reads `path`, at most `cap` bytes, never through a symbolic link at its last component.
/// With `strict`, a link anywhere in the path is refused too.
pub fn read(path: &Path, cap: u64, strict: bool) -> Result<Read1, Refused> {
    if strict {
        let abs = std::path::absolute(path).map_err(|e| Refused::Other(e.to_string()))?;
        match abs.canonicalize() {
            Ok(c) if c != abs => {
                return Err(Refused::NotPlain(format!(
                    "{}: a symbolic link is in its path (it leads to {}): not read",
                    path.display(),
                    c.display()
                )))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Refused::Absent),
            _ => {}
        }
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| refusal(path, &e))?;
    let meta = f.metadata().map_err(|e| refusal(path, &e))?;
    if !meta.is_file() {
        return Err(Refused::NotPlain(format!(
            "{}: not a regular file: not read",
            path.display()
        )));
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64);
    let mut bytes = Vec::new();
    let mut r: &File = &f;
    r.take(cap)
        .read_to_end(&mut bytes)
        .map_err(|e| refusal(path, &e))?;
    let mut one = [0u8; 1];
    let truncated = bytes.len() as u64 == cap && matches!(r.read(&mut one), Ok(1));
    Ok(Read1 {
        path: path.to_path_buf(),
        bytes,
        truncated,
        mtime,
        uid: std::os::unix::fs::MetadataExt::uid(&meta),
    })
}

fn refusal(path: &Path, e: &std::io::Error) -> Refused {
    match e.kind() {
        std::io::ErrorKind::NotFound => Refused::Absent,
        std::io::ErrorKind::PermissionDenied => {
            Refused::Permission(format!("{}: {e}", path.display()))
        }
        _ if e.raw_os_error() == Some(libc::ELOOP) => {
            Refused::NotPlain(format!("{}: a symbolic link: not followed", path.display()))
        }
        _ => Refused::Other(format!("{}: {e}", path.display())),
    }
}

/// The AER counter files of sysfs worth keeping: those of NVIDIA devices (vendor 0x10de) and
/// of the port above each. `root` is `/sys/bus/pci/devices` (a test gives another folder).
pub fn aer_text(root: &Path) -> (String, usize) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return (String::new(), 0);
    };
    let mut devices: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    devices.sort();
    let mut wanted: Vec<PathBuf> = Vec::new();
    for d in &devices {
        let vendor = std::fs::read_to_string(d.join("vendor")).unwrap_or_default();
        if vendor.trim() != "0x10de" {
            continue;
        }
        wanted.push(d.clone());
        // the upstream port: the parent of the device's own folder in /sys/devices
        if let Some(up) = d
            .canonicalize()
            .ok()
            .and_then(|c| c.parent().map(Path::to_path_buf))
        {
            let is_pci = up
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.matches(':').count() == 2 && n.contains('.'));
            if is_pci && !wanted.contains(&up) {
                wanted.push(up);
            }
        }
    }
    let mut text = String::new();
    let mut files = 0;
    for d in &wanted {
        let name = d
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for kind in ["aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal"] {
            if let Ok(r) = read(&d.join(kind), 64 << 10, false) {
                files += 1;
                text.push_str(&format!("==> {name} {kind} <==\n"));
                text.push_str(&String::from_utf8_lossy(&r.bytes));
                if !text.ends_with('\n') {
                    text.push('\n');
                }
            }
        }
    }
    (text, files)
}
