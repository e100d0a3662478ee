//! What the process asks of the C allocator (glibc's malloc), so that memory freed between the
//! stages of a large analysis goes back to the system instead of staying in the process: the
//! lists of a long input (its events, several times the size of one chunk's) are freed by one
//! stage and grown by the next, and the texts made by the scan's threads are freed in their
//! arenas while the next stage allocates in another.

/// Blocks at least this large are mapped on their own (and unmapped when freed), never carved
/// out of a heap that keeps them once freed; growing one is a remap, not a copy.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAPPED_FROM: libc::c_int = 2 << 20;

/// Sets the allocator up for a run of the command line (call once, first): large blocks
/// mapped on their own (glibc would otherwise raise that bound to the largest block freed so
/// far, and serve later large blocks from heaps that keep their memory).
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of the allocator; called before any thread starts
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MAPPED_FROM);
    }
}

/// Gives the free pages of every arena back to the system (after a stage that freed much).
pub(crate) fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory; it is safe at any time
    unsafe {
        libc::malloc_trim(0);
    }
}
