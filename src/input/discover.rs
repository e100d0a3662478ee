//! Discovery: the files an analysis reads, from its arguments (files, folders walked in order,
//! `PATH@HOST`, stdin), the host a folder names, and the links that lead outside an input folder.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A file found by discovery.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    /// Path on disk (`-` for stdin).
    pub path: PathBuf,
    /// Path to show.
    pub display: String,
    /// Host forced with `PATH@HOST` or implied by a host folder.
    pub host: Option<String>,
}

/// Splits `PATH@HOST` when the part after `@` looks like a host name and PATH exists.
pub fn split_host(arg: &str) -> (String, Option<String>) {
    if let Some((p, h)) = arg.rsplit_once('@') {
        let host_ok = !h.is_empty()
            && h.len() <= 253
            && h.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || c == b'_');
        if host_ok && !Path::new(arg).exists() && (Path::new(p).exists() || p == "-") {
            return (p.to_string(), Some(h.to_string()));
        }
    }
    (arg.to_string(), None)
}

static FOLLOW_LINKS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--follow-links`: follow symbolic links inside an input folder wherever they lead (off by
/// default: a link whose target is outside the folder is skipped with a warning).
pub fn set_follow_links(on: bool) {
    FOLLOW_LINKS.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `p`, an entry of the input folder `root`, is a symbolic link whose target lies
/// outside `root` and must not be followed: the warning that names it, or `None` to go on.
/// A bundle is untrusted: `kern.log -> /var/log/kern.log` would quote the analyzing machine's
/// own logs back to whoever uploaded the folder.
pub fn outside_link(root: &Path, p: &Path) -> Option<String> {
    if FOLLOW_LINKS.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let meta = std::fs::symlink_metadata(p).ok()?;
    if !meta.file_type().is_symlink() {
        return None;
    }
    let target = std::fs::read_link(p)
        .map(|t| t.display().to_string())
        .unwrap_or_default();
    let inside = match (root.canonicalize(), p.canonicalize()) {
        (Ok(r), Ok(t)) => t.starts_with(&r),
        // a dangling link: opening it fails later with its own warning
        (Ok(_), Err(_)) => return None,
        _ => false,
    };
    (!inside).then(|| {
        format!(
            "{}: symbolic link to {target}, outside the input folder: skipped (--follow-links follows it)",
            p.display()
        )
    })
}

/// Walks the arguments; returns files in deterministic order and warnings for what was skipped.
pub fn discover(args: &[String]) -> (Vec<Found>, Vec<String>) {
    let mut found = Vec::new();
    let mut warnings = Vec::new();
    for arg in args {
        let (p, host) = split_host(arg);
        if p == "-" {
            found.push(Found {
                path: PathBuf::from("-"),
                display: "-".into(),
                host,
            });
            continue;
        }
        let path = PathBuf::from(&p);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                let mut visited = BTreeSet::new();
                if let Ok(c) = path.canonicalize() {
                    visited.insert(c);
                }
                walk(
                    &path,
                    &path,
                    host.as_deref(),
                    &mut visited,
                    &mut found,
                    &mut warnings,
                    0,
                );
            }
            Ok(m) if m.is_file() => found.push(Found {
                display: p.clone(),
                path,
                host,
            }),
            Ok(_) => warnings.push(format!(
                "{p}: not a regular file (FIFO, socket or device), skipped"
            )),
            Err(e) => warnings.push(format!("{p}: cannot read: {e}")),
        }
    }
    (found, warnings)
}

fn walk(
    root: &Path,
    dir: &Path,
    host: Option<&str>,
    visited: &mut BTreeSet<PathBuf>,
    found: &mut Vec<Found>,
    warnings: &mut Vec<String>,
    depth: u32,
) {
    if depth > 32 {
        warnings.push(format!(
            "{}: folder nesting deeper than 32, not descended",
            dir.display()
        ));
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            warnings.push(format!("{}: cannot list folder: {e}", dir.display()));
            return;
        }
    };
    let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    for p in names {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        if let Some(w) = outside_link(root, &p) {
            warnings.push(w);
            continue;
        }
        let meta = match std::fs::metadata(&p) {
            Ok(m) => m,
            Err(e) => {
                warnings.push(format!("{}: cannot read: {e}", p.display()));
                continue;
            }
        };
        if meta.is_dir() {
            match p.canonicalize() {
                Ok(c) if visited.insert(c.clone()) => {
                    walk(root, &p, host, visited, found, warnings, depth + 1)
                }
                Ok(_) => warnings.push(format!("{}: symlink loop, not followed", p.display())),
                Err(e) => warnings.push(format!("{}: cannot resolve: {e}", p.display())),
            }
        } else if meta.is_file() {
            let host = host.map(str::to_string).or_else(|| host_folder(root, &p));
            found.push(Found {
                display: p.display().to_string(),
                path: p,
                host,
            });
        } else {
            warnings.push(format!(
                "{}: not a regular file (FIFO, socket or device), skipped",
                p.display()
            ));
        }
    }
}

/// The folder-per-host convention: the first folder below the given root names the host when it
/// looks like a host name (letters, digits, `-`, `.`, `_`, and at least one letter).
fn host_folder(root: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root).ok()?;
    let mut comps = rel.components();
    let first = comps.next()?.as_os_str().to_string_lossy().into_owned();
    comps.next()?; // the file itself must be below it
    host_like(&first).then_some(first)
}

/// Whether a folder name looks like a host name (letters, digits, `-`, `.`, `_`, at least one
/// letter) and not like a system folder.
fn host_like(name: &str) -> bool {
    name.bytes().any(|c| c.is_ascii_alphabetic())
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || c == b'_')
        && !generic_folder(name)
}

/// Folder names that hold logs but name no host (`slurm/`, `logs/`, `nodes/`): never taken as
/// hosts, by folder per host or by redaction (which would alias `SLURM` inside
/// `SLURM_JOB_NODELIST`).
pub fn generic_folder(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "var"
            | "log"
            | "logs"
            | "tmp"
            | "temp"
            | "etc"
            | "proc"
            | "sys"
            | "run"
            | "home"
            | "root"
            | "slurm"
            | "nodes"
            | "node"
            | "hosts"
            | "host"
            | "jobs"
            | "job"
            | "data"
            | "output"
            | "outputs"
            | "results"
            | "result"
            | "bundle"
            | "bundles"
            | "reports"
            | "report"
            | "journal"
            | "syslog"
            | "kubernetes"
            | "k8s"
            | "pods"
            | "containers"
            | "nvidia"
            | "gpu"
            | "gpus"
            | "case"
            | "cases"
            | "incident"
            | "incidents"
            | "collected"
            | "dump"
    )
}

/// Folder per host inside an archive: the first folder of a member's name names its host
/// (`bundle.tgz!gpu-node-07/var/log/kern.log`), as a folder below a scan root does on disk.
pub fn member_host(name: &str) -> Option<String> {
    let mut comps = name.split('/').filter(|c| !c.is_empty() && *c != ".");
    let first = comps.next()?;
    comps.next()?; // the member itself must be below it
    host_like(first).then(|| first.to_string())
}
