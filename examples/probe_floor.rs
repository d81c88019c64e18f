//! What the memory of this machine makes an insert cost at the least: the reads of one
//! random cache line in each of 26 tables (the default plan's 10 permuted tables and 16
//! band tables), as an insert's probes read them, with nothing else done.
//!
//! `cargo run --release --example probe_floor -- [MIB_PER_TABLE]` (default 150, about
//! what each table of a 10 M index takes; Linux only)
//!
//! Each table is a map of its own with room for three growths behind it, advised for
//! transparent huge pages, as the index maps a growing table. Three passes of 2,000,000
//! rounds each print the nanoseconds a round of 26 reads takes: the reads alone, every
//! line asked for first (as `Memory::prefetch` does), and asked for first then written
//! (an insert's probe and placement). The index's own cost per insert, its probes and
//! placements in the tables included, is the index bench's (`cargo bench --bench index`);
//! the difference between the two is what the index adds to what the memory costs.
//! Figures: CHANGELOG.md, benchmark history (note 4).

#[cfg(target_os = "linux")]
fn main() {
    use std::time::Instant;
    const TABLES: usize = 26;
    const ROUNDS: usize = 2_000_000;
    let mib: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 150,
        Some(Ok(mib)) if mib > 0 => mib,
        Some(_) => {
            eprintln!("probe_floor: MIB_PER_TABLE must be a whole number above 0");
            std::process::exit(2);
        }
    };
    let lines = mib << 20 >> 6;
    let tables: Vec<&mut [[u64; 8]]> = (0..TABLES).map(|_| table(lines)).collect();
    let mut tables = tables;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (pass, name) in ["reads", "asked for first", "asked for first, then written"]
        .iter()
        .enumerate()
    {
        let started = Instant::now();
        let mut sum = 0u64;
        for _ in 0..ROUNDS {
            let at: [usize; TABLES] = std::array::from_fn(|_| (next() % lines as u64) as usize);
            if pass > 0 {
                for (table, &at) in tables.iter().zip(&at) {
                    prefetch(&table[at]);
                }
            }
            for (table, &at) in tables.iter_mut().zip(&at) {
                sum = sum.wrapping_add(table[at][0]);
                if pass == 2 {
                    table[at][1] = sum;
                }
            }
        }
        let ns = started.elapsed().as_secs_f64() * 1e9 / ROUNDS as f64;
        println!(
            "{TABLES} tables of {mib} MiB, {name}: {ns:.0} ns a round ({})",
            sum % 2
        );
    }
}

/// A zeroed table of `lines` cache lines, mapped with room for three growths, advised
/// for huge pages and faulted in.
#[cfg(target_os = "linux")]
fn table(lines: usize) -> &'static mut [[u64; 8]] {
    let bytes = lines * 64;
    // SAFETY: an anonymous private map, never unmapped (it lives as long as the process);
    // the advice only changes how the kernel backs it.
    unsafe {
        let map = libc::mmap(
            std::ptr::null_mut(),
            bytes * 4,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        );
        assert!(map != libc::MAP_FAILED, "probe_floor: mmap failed");
        libc::madvise(map, bytes, libc::MADV_HUGEPAGE);
        let table = std::slice::from_raw_parts_mut(map.cast::<[u64; 8]>(), lines);
        for line in table.iter_mut() {
            line[0] = 1;
        }
        table
    }
}

#[cfg(target_os = "linux")]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch of a valid reference's address; it reads nothing.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (value as *const T).cast::<i8>(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("probe_floor: Linux only (it maps its tables with mmap and madvise)");
}
