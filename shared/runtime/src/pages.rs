//! The services' memory in small pages: transparent huge pages off for the process.
//!
//! mimalloc asks the kernel for transparent huge pages on the regions it reserves
//! (`madvise(MADV_HUGEPAGE)`), so the first touch of each 2 MiB of them faults in a whole huge
//! page, zeroed on the spot. On a virtual machine that is slow: in the first second of an
//! open-loop run against a fresh API (10,400 buyers/s, pinned, an event of 100 seats) the
//! API spent about a fifth of its samples zeroing huge pages (`clear_page_erms` under
//! `do_huge_pmd_anonymous_page`), and the run's first 0.7 s had a p99 of up to 330 ms. With huge
//! pages off, the same start stayed at 2 to 5 ms and the API's peak RSS fell from 103 to 56 MB:
//! a huge page also holds 2 MiB where a few KiB are used.

/// Turns transparent huge pages off for this process (the kernel's `PR_SET_THP_DISABLE`, which
/// also covers regions already advised), before the service allocates its working memory.
/// Where the kernel refuses, the service runs as before, and the warning says so.
pub fn use_small_pages() {
    #[cfg(target_os = "linux")]
    if let Err(error) = rustix::thread::disable_transparent_huge_pages(true) {
        eprintln!("warning: transparent huge pages stay on ({error})");
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn the_process_asks_for_no_transparent_huge_pages() {
        super::use_small_pages();
        assert_eq!(
            rustix::thread::transparent_huge_pages_are_disabled().ok(),
            Some(true)
        );
    }
}
