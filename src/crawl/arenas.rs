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
