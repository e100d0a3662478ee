//! Memory maps of plain files that survive the file shrinking under them.
//!
//! Reading a page of a mapped file past its current end raises SIGBUS, which kills the process:
//! a log rotated or truncated by another process while faultline scans it would end the whole
//! analysis. A [`GuardedMap`] registers its address range with a process-wide SIGBUS handler;
//! a fault inside a registered range replaces the faulting page with a page of zeros (read as NUL
//! bytes), marks the map as shrunk, and lets the read go on. The input then gets a warning, and
//! the other inputs are analyzed as usual. A fault anywhere else goes to the handler that was
//! installed before (Rust's own, or the default action), so real crashes still crash.

use memmap2::Mmap;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// How many maps can be registered at once; past this, files are read instead of mapped.
const SLOTS: usize = 64;

/// Start address of each registered range (valid while its length is not zero).
static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
/// Length of each registered range; zero marks a free slot.
static LENS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
/// Set by the handler when a page of the range was replaced by zeros.
static SHRUNK: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
/// Registration and release of slots (never taken by the signal handler).
static CLAIM: Mutex<()> = Mutex::new(());

/// A read-only memory map of a file whose shrinking cannot kill the process.
pub struct GuardedMap {
    map: Mmap,
    slot: usize,
}

impl GuardedMap {
    /// Maps `file` when the guard is in place and a slot is free; `None` means: read the file
    /// instead. An empty file is never mapped.
    pub fn new(file: &File) -> Option<GuardedMap> {
        if !guard::install() {
            return None;
        }
        // Safety: the map is read-only and private to this process; the file changing under it
        // is what the guard is for (a shrink is caught, other writes only change bytes read).
        let map = unsafe { Mmap::map(file) }.ok()?;
        if map.is_empty() {
            return None;
        }
        let _held = CLAIM.lock().unwrap_or_else(|e| e.into_inner());
        let slot = (0..SLOTS).find(|&i| LENS[i].load(Ordering::Acquire) == 0)?;
        SHRUNK[slot].store(false, Ordering::Release);
        STARTS[slot].store(map.as_ptr() as usize, Ordering::Release);
        LENS[slot].store(map.len(), Ordering::Release);
        Some(GuardedMap { map, slot })
    }

    /// Whether a page past the file's end was read while mapped (the file shrank during the
    /// run): those pages read as NUL bytes.
    pub fn shrunk(&self) -> bool {
        SHRUNK[self.slot].load(Ordering::Acquire)
    }
}

impl std::ops::Deref for GuardedMap {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl Drop for GuardedMap {
    fn drop(&mut self) {
        let _held = CLAIM.lock().unwrap_or_else(|e| e.into_inner());
        LENS[self.slot].store(0, Ordering::Release);
        STARTS[self.slot].store(0, Ordering::Release);
        // the map itself is unmapped after this, zero pages included
    }
}

/// Lets the system take back the pages of `part` when it lies inside a registered map (a part
/// of a mapped file already scanned): the pages it holds whole stop counting in the process's
/// memory, and a later read of them maps them again from the page cache, with the same bytes.
/// Memory that is not a registered map (read or decoded data) is left alone.
pub fn release(part: &[u8]) {
    let (start, len) = (part.as_ptr() as usize, part.len());
    if len == 0 {
        return;
    }
    // both ends in the same map: the map outlives `part`, which borrows from it
    match (slot_of(start), slot_of(start + len - 1)) {
        (Some(a), Some(b)) if a == b => {
            // a chunk of a mapped file is scanned: it counts as read for the progress bar
            super::progress::add(len as u64);
            guard::drop_pages(start, len)
        }
        _ => {}
    }
}

/// The slot whose range holds `addr`, if any (called from the signal handler: atomics only).
fn slot_of(addr: usize) -> Option<usize> {
    (0..SLOTS).find(|&i| {
        let len = LENS[i].load(Ordering::Acquire);
        let start = STARTS[i].load(Ordering::Acquire);
        len != 0 && addr >= start && addr - start < len
    })
}

#[cfg(unix)]
mod guard {
    use super::{slot_of, OnceLock, Ordering, SHRUNK};
    use std::cell::UnsafeCell;

    /// The SIGBUS action installed before ours, to which faults outside our maps are passed.
    struct Previous(UnsafeCell<libc::sigaction>);
    // Safety: written once by `install` before any map is registered, then only read.
    unsafe impl Sync for Previous {}

    static PREVIOUS: OnceLock<Previous> = OnceLock::new();
    static PAGE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static INSTALLED: OnceLock<bool> = OnceLock::new();

    /// Drops the pages that `start..start + len` (inside a registered read-only map) holds
    /// whole; they are read again from the file (or are zeros again) if touched.
    pub fn drop_pages(start: usize, len: usize) {
        let page = PAGE.load(Ordering::Acquire);
        if page == 0 {
            return;
        }
        let first = start.next_multiple_of(page);
        let end = (start + len) & !(page - 1);
        if end > first {
            // Safety: the range is inside a private read-only map this process owns and keeps
            // while the caller's slice borrows it; advising it away changes no byte read later
            // (a file page comes back from the page cache, a zero page stays zeros)
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_DONTNEED);
            }
        }
    }

    /// Installs the SIGBUS handler once per process; false when it could not be installed.
    pub fn install() -> bool {
        *INSTALLED.get_or_init(|| unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page <= 0 {
                return false;
            }
            PAGE.store(page as usize, Ordering::Release);
            let prev = PREVIOUS.get_or_init(|| Previous(UnsafeCell::new(std::mem::zeroed())));
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, prev.0.get()) == 0
        })
    }

    /// The handler: a fault inside a registered map gets a zero page in place of the page the
    /// file no longer has; anything else goes to the previous action.
    extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        unsafe {
            let addr = if info.is_null() {
                0
            } else {
                (*info).si_addr() as usize
            };
            if let Some(slot) = slot_of(addr) {
                let page = PAGE.load(Ordering::Acquire);
                let base = addr & !(page - 1);
                let zero = libc::mmap(
                    base as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                );
                if zero != libc::MAP_FAILED {
                    SHRUNK[slot].store(true, Ordering::Release);
                    return;
                }
            }
            pass_on(sig, info, ctx);
        }
    }

    /// Hands a fault that is not ours to the action that was there before.
    unsafe fn pass_on(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        let prev = PREVIOUS.get().map(|p| unsafe { *p.0.get() });
        match prev {
            Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
                if p.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        unsafe { std::mem::transmute(p.sa_sigaction) };
                    f(sig, info, ctx);
                } else {
                    let f: extern "C" fn(libc::c_int) =
                        unsafe { std::mem::transmute(p.sa_sigaction) };
                    f(sig);
                }
            }
            _ => unsafe {
                // the default action: the faulting instruction runs again and the process ends
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
            },
        }
    }
}

#[cfg(not(unix))]
mod guard {
    /// No guard outside Unix: files are read, never mapped.
    pub fn install() -> bool {
        false
    }

    /// Nothing is mapped outside Unix.
    pub fn drop_pages(_start: usize, _len: usize) {}
}

#[cfg(all(test, unix))]
mod tests {
    use super::GuardedMap;
    use std::io::Write;

    #[test]
    fn a_file_truncated_while_mapped_reads_as_zeros_and_says_so() {
        let dir = std::env::temp_dir().join(format!("faultline-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("shrinking.log");
        let mut f = std::fs::File::create(&path).unwrap();
        let line = b"Mar 14 02:13:07 node kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n";
        for _ in 0..4000 {
            f.write_all(line).unwrap();
        }
        f.sync_all().unwrap();
        drop(f);
        let file = std::fs::File::open(&path).unwrap();
        let map = GuardedMap::new(&file).expect("mapped");
        let len = map.len();
        assert_eq!(len, line.len() * 4000);
        assert!(!map.shrunk());
        // another process truncates the log while it is mapped
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        let head_ok = map[..line.len()] == line[..];
        // past the new end: without the guard this read is a SIGBUS
        let tail_nuls = map[len - 100..].iter().all(|&b| b == 0);
        assert!(head_ok, "the part still in the file reads as before");
        assert!(tail_nuls, "the part cut off reads as NUL bytes");
        assert!(map.shrunk(), "the map knows the file shrank");
        drop(map);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unshrunk_file_is_read_whole() {
        let dir = std::env::temp_dir().join(format!("faultline-map2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("steady.log");
        std::fs::write(&path, b"one\ntwo\n").unwrap();
        let map = GuardedMap::new(&std::fs::File::open(&path).unwrap()).expect("mapped");
        assert_eq!(&map[..], b"one\ntwo\n");
        assert!(!map.shrunk());
        drop(map);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
