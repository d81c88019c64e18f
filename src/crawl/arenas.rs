//! A process-wide allocator setting for a process that runs the crawler.

/// Caps glibc's malloc at two arenas, unless `MALLOC_ARENA_MAX` in the environment says
/// otherwise; does nothing on other C libraries. The `crawldedup` binary calls it first
/// thing; a program embedding the crawler may call it at its start too (it changes the
/// whole process's allocator, so the crate never calls it on its own).
///
/// glibc gives each thread that allocates its own arena, up to eight per core, and keeps
/// what each arena once held. A crawl allocates on tokio's workers, the blocking pool (where
/// big pages are extracted), sled's threads and the writer threads: on the crawl benchmark
/// (`cargo bench --bench crawl`, 20,000 pages, 2 cores) the peak resident memory was
/// 77-85 MiB with the default and 60-66 MiB with two arenas, with no change in pages per
/// second beyond the runs' noise (three alternated runs of five rounds each).
pub fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets a parameter of the allocator; it is safe to call at
        // any time, from any thread, and a refused value leaves the default in place.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 2);
        }
    }
}

/// mimalloc's `mi_option_arena_eager_commit` and `mi_option_purge_delay`: their places in
/// `mi_option_t` of the pinned libmimalloc-sys's mimalloc 3 header (its Rust constants stop
/// before them). A test reads them back from the environment by these numbers.
#[cfg(feature = "mimalloc")]
const MI_ARENA_EAGER_COMMIT: std::ffi::c_int = 4;
#[cfg(feature = "mimalloc")]
const MI_PURGE_DELAY: std::ffi::c_int = 15;

/// Tunes mimalloc, when it is the process's allocator (the `crawldedup` binary's, with the
/// `mimalloc` feature): its arenas are committed as they are used, not all at once, and
/// what a crawl frees goes back to the system after 10 ms, unless `MIMALLOC_ARENA_EAGER_COMMIT`
/// or `MIMALLOC_PURGE_DELAY` in the environment says otherwise. With mimalloc's defaults a
/// crawl's peak memory is far above glibc's; a purge at once (a delay of 0) keeps the peak
/// near glibc's but spends a share of each page's CPU returning memory and faulting it back
/// in; 10 ms keeps most of both gains (the crawl benchmark: docs/benchmarks.md). The
/// binary calls it from a constructor as it loads, before anything allocates: called later
/// (even first thing in `main`), it leaves the first arena as mimalloc committed it.
#[cfg(feature = "mimalloc")]
pub fn tune_mimalloc() {
    for (option, value) in [(MI_ARENA_EAGER_COMMIT, 0), (MI_PURGE_DELAY, PURGE_DELAY_MS)] {
        // SAFETY: mi_option_set_default only stores an option's value, and only when the
        // environment did not set it (mimalloc reads the environment as the process loads);
        // both values are valid for their options. Nothing here allocates: mimalloc reserves
        // its first arena at the process's first allocation, with the options it has then.
        unsafe { libmimalloc_sys::mi_option_set_default(option, value) };
    }
}

/// How long mimalloc keeps freed memory before it returns it to the system, in ms.
#[cfg(feature = "mimalloc")]
const PURGE_DELAY_MS: std::ffi::c_long = 10;

#[cfg(all(test, feature = "mimalloc"))]
mod tests {
    /// The numbers `tune_mimalloc` sets are the options it means: a child of this test
    /// binary started with both in its environment reads them back by those numbers.
    #[test]
    fn the_mimalloc_options_set_are_the_eager_commit_and_purge_delay() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "crawl::arenas::tests::print_options",
                "--ignored",
                "--nocapture",
            ])
            .env("MIMALLOC_ARENA_EAGER_COMMIT", "3")
            .env("MIMALLOC_PURGE_DELAY", "77")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("options 3 77"), "{stdout}");
    }

    #[test]
    #[ignore = "run by the test above, in a child with the options in its environment"]
    fn print_options() {
        // SAFETY: mi_option_get only reads an option (from the environment the first time).
        let (eager, purge) = unsafe {
            (
                libmimalloc_sys::mi_option_get(super::MI_ARENA_EAGER_COMMIT),
                libmimalloc_sys::mi_option_get(super::MI_PURGE_DELAY),
            )
        };
        println!("options {eager} {purge}");
    }
}
