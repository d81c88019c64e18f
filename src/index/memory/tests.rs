//! The tables' tests.

use super::*;

/// Pages of `values` the kernel backs now (Linux).
#[cfg(target_os = "linux")]
fn resident_pages<T>(values: &[T]) -> usize {
    const PAGE: usize = 4096;
    let start = values.as_ptr() as usize;
    assert_eq!(start % PAGE, 0, "a mapping starts on a page");
    let pages = std::mem::size_of_val(values).div_ceil(PAGE);
    let mut flags = vec![0u8; pages];
    // SAFETY: the range is one live mapping, and `flags` holds a byte per page of it.
    let status = unsafe {
        libc::mincore(
            start as *mut libc::c_void,
            pages * PAGE,
            flags.as_mut_ptr().cast(),
        )
    };
    assert_eq!(status, 0, "mincore: {}", std::io::Error::last_os_error());
    flags.iter().filter(|&&f| f & 1 == 1).count()
}

#[test]
#[cfg(target_os = "linux")]
fn a_populated_column_is_backed_from_the_start_and_keeps_what_it_holds() {
    let n = (8 << 20) / std::mem::size_of::<CacheLine>();
    let pages = (8 << 20) / 4096;
    let mut column = Column::<CacheLine>::zeroed(n);
    assert!(
        resident_pages(&column) < pages / 2,
        "untouched memory is not backed"
    );
    column[7].tags[3] = 42;
    column[n - 1].fragments[0] = 7;
    column.populate();
    assert_eq!(resident_pages(&column), pages);
    assert_eq!((column[7].tags[3], column[n - 1].fragments[0]), (42, 7));
    assert_eq!(
        column
            .iter()
            .map(|l| l.tags.iter().sum::<u32>())
            .sum::<u32>(),
        42
    );
}

/// A deterministic stream of 64-bit keys (xorshift64) from `state`.
fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// The ids a probe of `key` at distance 0 finds.
fn found(table: &Bucketed, key: u64) -> Vec<u32> {
    let mut out = Vec::new();
    table.probe(key, 0, &mut out);
    out.into_iter().map(|(id, _)| id).collect()
}

#[test]
fn every_entry_is_found_after_the_table_grows() {
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    let entries: Vec<(u64, u32)> = (0..60_000).map(|i| (next(), i)).collect();
    let (keys, ids): (Vec<u64>, Vec<u32>) = entries[..20_000].iter().copied().unzip();
    let mut table = Bucketed::build(26, keys, ids);
    let lines = table.lines.len();
    for &(key, id) in &entries[20_000..] {
        table.insert(key, id, 0);
    }
    assert!(table.lines.len() > lines, "the table grew");
    assert_eq!(table.len(), 60_000);
    for &(key, id) in &entries {
        assert!(found(&table, key).contains(&id), "{key:x}");
    }
    let load = table.len() as f64 / (table.lines.len() * SLOTS) as f64;
    assert!(load <= MAX_LOAD, "{load}");
}

/// A table of the first `held` entries, with the rest as its tail.
fn with_tail(entries: &[(u64, u32)], held: usize) -> Bucketed {
    let (keys, ids): (Vec<u64>, Vec<u32>) = entries[..held].iter().copied().unzip();
    let mut table = Bucketed::build(24, keys, ids);
    let rest = &entries[held..];
    table.add_tail(rest.len(), |i| rest[i], Vec::new());
    table
}

#[test]
fn a_tail_is_probed_with_the_table_and_folds_in_with_nothing_lost() {
    let mut next = xorshift(0x2468_ace0_1357_9bdfu64);
    let entries: Vec<(u64, u32)> = (0..40_000).map(|i| (next(), i)).collect();
    // A tail bigger than the room the table has left, so the fold must grow it.
    let mut table = with_tail(&entries, 25_000);
    assert!(table.has_tail());
    assert!(table.room() < 15_000, "{}", table.room());
    assert_eq!(table.len(), 40_000);
    for &(key, id) in &entries {
        assert_eq!(found(&table, key), vec![id], "{key:x} before the fold");
    }
    // Inserts go to the table itself while the tail is there.
    table.insert(next(), 40_000, 0);
    table.fold(0);
    assert!(!table.has_tail());
    assert_eq!(table.len(), 40_001);
    for &(key, id) in &entries {
        assert_eq!(found(&table, key), vec![id], "{key:x} after the fold");
    }
}

#[test]
fn a_captured_table_with_its_tail_merged_is_the_whole_table() {
    let mut next = xorshift(0x1111_2222_3333_4444u64);
    let entries: Vec<(u64, u32)> = (0..30_000).map(|i| (next(), i)).collect();
    for held in [29_000, 10_000] {
        let table = with_tail(&entries, held);
        let mut buffer = Vec::new();
        let captured = table.capture(&mut buffer);
        let (shape, lines) = captured.merge(&mut buffer);
        let lines: Vec<CacheLine> = lines.to_vec();
        let copy = Bucketed::<u64>::from_parts(shape, Column::Owned(lines)).unwrap();
        assert!(!copy.has_tail());
        assert_eq!(copy.len(), 30_000);
        for &(key, id) in &entries {
            assert_eq!(found(&copy, key), vec![id], "{key:x}, {held} held");
        }
    }
}

#[test]
fn a_merge_after_the_floor_rose_drops_the_expired_entries_only() {
    let mut next = xorshift(0x5151_7a7a_0303_c1c1u64);
    let entries: Vec<(u64, u32)> = (0..30_000).map(|i| (next(), i)).collect();
    let (keys, ids): (Vec<u64>, Vec<u32>) = entries[..20_000].iter().copied().unzip();
    let mut table = Bucketed::build(20, keys, ids);
    for &(key, id) in &entries[20_000..] {
        table.insert(key, id, 12_000);
    }
    table.merge(12_000);
    assert_eq!(table.len(), 18_000);
    for &(key, id) in &entries {
        assert_eq!(found(&table, key).contains(&id), id >= 12_000, "{id}");
    }
    // A later merge at the same floor keeps everything.
    table.merge(12_000);
    assert_eq!(table.len(), 18_000);
}

#[test]
fn inserts_past_the_floor_keep_a_steady_table_from_growing() {
    let mut next = xorshift(0x0bad_cafe_f00d_1234u64);
    let mut table = Bucketed::build(26, Vec::<u64>::new(), Vec::new());
    // 10,000 live entries at any time, 200,000 inserted: expired slots are taken or
    // dropped, and the table stays the size that 10,000 entries need.
    for id in 0..200_000u32 {
        table.insert(next(), id, id.saturating_sub(10_000));
    }
    assert!(
        table.lines.len() * SLOTS <= 4 * 10_000,
        "{} lines",
        table.lines.len()
    );
}

#[test]
fn prefixes_crowded_into_a_narrow_range_make_no_long_runs() {
    let mut next = xorshift(0x7777_1234_4321_7777u64);
    // 60,000 keys whose 26-bit prefixes all lie in 1% of the prefix space: homes taken
    // straight from the prefix would pile them into one run of full lines.
    let span = (1u64 << 26) / 100;
    let keys: Vec<u64> = (0..60_000)
        .map(|_| {
            let k = next();
            ((k >> 38) % span) << 38 | (k & ((1 << 38) - 1))
        })
        .collect();
    let table = Bucketed::build(26, keys.clone(), (0..60_000).collect());
    let mut longest = 0;
    let mut run = 0;
    for line in table.lines.iter() {
        run = if line.tags[SLOTS - 1] != 0 {
            run + 1
        } else {
            0
        };
        longest = longest.max(run);
    }
    assert!(longest < 40, "a run of {longest} full lines");
    for (id, &key) in keys.iter().enumerate().step_by(101) {
        assert!(found(&table, key).contains(&(id as u32)));
    }
}

#[test]
fn probe_finds_exactly_the_entries_sharing_the_prefix_within_k_on_the_fragment() {
    let mut next = xorshift(0x1234_5678_9abc_def1u64);
    let leading = 12;
    // Keys in a few prefixes, so that many share one.
    let keys: Vec<u64> = (0..20_000)
        .map(|_| {
            let k = next();
            (k & !(u64::MAX << 52)) | ((k >> 60) << 52)
        })
        .collect();
    let mut table = Bucketed::build(leading, keys[..15_000].to_vec(), (0..15_000).collect());
    for (i, &key) in keys.iter().enumerate().skip(15_000) {
        table.insert(key, i as u32, 0);
    }
    assert_eq!(table.len(), 20_000);
    for probe in keys.iter().step_by(97).map(|k| k ^ (0b1011 << 32)) {
        let mut got = Vec::new();
        table.probe(probe, 3, &mut got);
        got.sort_unstable();
        let mask = u32::MAX << (32 - leading);
        let top = |k: u64| (k >> 32) as u32;
        let mut want: Vec<(u32, u32)> = keys
            .iter()
            .enumerate()
            .filter(|(_, k)| (top(**k) ^ top(probe)) & mask == 0)
            .map(|(i, k)| (i as u32, (top(*k) ^ top(probe)).count_ones()))
            .filter(|&(_, d)| d <= 3)
            .collect();
        want.sort_unstable();
        assert_eq!(got, want);
    }
}

#[test]
fn lines_made_ready_near_a_growth_are_the_lines_it_fills() {
    let mut next = xorshift(0x3c3c_5a5a_9696_f0f0u64);
    let n = PREPARE_LINES * SLOTS * 2 / 3;
    let entries: Vec<(u64, u32)> = (0..n as u32 * 2).map(|i| (next(), i)).collect();
    let (keys, ids): (Vec<u64>, Vec<u32>) = entries[..n].iter().copied().unzip();
    let mut table = Bucketed::build(24, keys, ids);
    let lines = table.lines.len();
    assert!(lines >= PREPARE_LINES);
    // Far from its growth: nothing to make ready.
    assert_eq!(table.next_growth(0), None);
    let mut inserted = n;
    while table.next_growth(0).is_none() {
        let (key, id) = entries[inserted];
        table.insert(key, id, 0);
        inserted += 1;
    }
    assert_eq!(table.lines.len(), lines, "near the growth, not past it");
    let wanted = table.next_growth(0).unwrap();
    assert!(
        wanted as f64 >= lines as f64 * GROWTH,
        "{wanted} lines for {lines}"
    );
    // Not when ids expired since its last re-placement: it may keep its size.
    assert_eq!(table.next_growth(1), None);
    assert!(table.offer(Column::zeroed(wanted), 1).is_some());
    // Lines of another size are given back; those of the size are kept, and counted.
    let other = table.offer(Column::zeroed(wanted + 1), 0).expect("refused");
    assert_eq!(other.len(), wanted + 1);
    let before = table.bytes();
    let ready = Column::<CacheLine>::zeroed(wanted);
    let at = ready.as_ptr();
    assert!(table.offer(ready, 0).is_none());
    assert_eq!(
        table.bytes(),
        before + wanted * std::mem::size_of::<CacheLine>()
    );
    assert_eq!(table.next_growth(0), None, "ready already");
    // The growth fills them, and finds every entry after it.
    while table.lines.len() == lines {
        let (key, id) = entries[inserted];
        table.insert(key, id, 0);
        inserted += 1;
    }
    assert_eq!((table.lines.as_ptr(), table.lines.len()), (at, wanted));
    for &(key, id) in &entries[..inserted] {
        assert!(found(&table, key).contains(&id), "{key:x}");
    }
}

/// Checks what a probe relies on in every line of `table`: slots fill from the first, and
/// each entry sits in the first line from its home on that was not full (every line from
/// its home to its own, wrapping round, is full). Returns the entries (fragment, tag).
fn entries_where_probes_find_them(table: &Bucketed) -> Vec<(u32, u32)> {
    let count = table.lines.len();
    let full = |at: usize| table.lines[at].tags.iter().all(|&t| t != 0);
    let mut held = Vec::new();
    for (at, line) in table.lines.iter().enumerate() {
        let used = line.tags.iter().take_while(|&&t| t != 0).count();
        assert!(
            line.tags[used..].iter().all(|&t| t == 0),
            "a gap in line {at}"
        );
        for slot in 0..used {
            let f = line.fragments[slot];
            let mut from = table.home(f);
            while from != at {
                assert!(
                    full(from),
                    "line {from}, between the home and line {at}, not full"
                );
                from = if from + 1 == count { 0 } else { from + 1 };
            }
            held.push((f, line.tags[slot]));
        }
    }
    assert_eq!(held.len() as u64, table.entries);
    held.sort_unstable();
    held
}

#[test]
fn a_table_grown_in_place_holds_every_entry_where_a_probe_finds_it() {
    // 26 leading bits spread the homes; 5 crowd 60,000 entries on 32 homes, in runs of
    // full lines thousands long that wrap round the end: entries far past their home,
    // which the growth in place must set aside and place last.
    for leading in [26, 5] {
        let mut next = xorshift(0x5151_a3a3_c7c7_0f0fu64 ^ u64::from(leading));
        let entries: Vec<(u64, u32)> = (0..60_000).map(|i| (next(), i)).collect();
        let (keys, ids): (Vec<u64>, Vec<u32>) = entries[..2_000].iter().copied().unzip();
        let mut table = Bucketed::build(leading, keys, ids);
        let before = GROWN_IN_PLACE.with(|n| n.get());
        for &(key, id) in &entries[2_000..] {
            let lines = table.lines.len();
            table.insert(key, id, 0);
            assert!(
                table.lines.len() == lines || table.lines.len() as f64 >= lines as f64 * GROWTH
            );
        }
        let in_place = GROWN_IN_PLACE.with(|n| n.get()) - before;
        assert!(
            in_place >= 3,
            "{in_place} growths in place, leading {leading}"
        );
        let mut want: Vec<(u32, u32)> = (entries.iter())
            .map(|&(key, id)| (fragment(key), id + 1))
            .collect();
        want.sort_unstable();
        assert_eq!(
            entries_where_probes_find_them(&table),
            want,
            "leading {leading}"
        );
        for &(key, id) in &entries {
            assert!(
                found(&table, key).contains(&id),
                "{key:x}, leading {leading}"
            );
        }
    }
}

#[test]
fn a_growth_in_place_drops_the_expired_entries_and_keeps_the_rest() {
    let mut next = xorshift(0x0f1e_2d3c_4b5a_6978u64);
    let entries: Vec<(u64, u32)> = (0..50_000).map(|i| (next(), i)).collect();
    let mut table = Bucketed::build(24, vec![next()], vec![0]);
    table.grow(0);
    assert!(matches!(table.lines, Column::Grown { .. }));
    // Filled to the load it grows at, then the ids below 1,000 expire: the growth that
    // comes drops them, in place.
    let mut inserted = 1;
    while table.lines.len() < 4_096 || table.room() > 0 {
        let (key, id) = entries[inserted];
        table.insert(key, id, 0);
        inserted += 1;
    }
    let lines = table.lines.len();
    let before = GROWN_IN_PLACE.with(|n| n.get());
    table.grow(1_000);
    assert!(table.lines.len() > lines);
    assert_eq!(GROWN_IN_PLACE.with(|n| n.get()), before + 1, "in place");
    let mut want: Vec<(u32, u32)> = (entries[1_000..inserted].iter())
        .map(|&(key, id)| (fragment(key), id + 1))
        .collect();
    want.sort_unstable();
    assert_eq!(entries_where_probes_find_them(&table), want);
}

#[test]
fn a_grown_column_lengthens_in_place_and_moves_only_past_its_room() {
    let n = 100_000;
    let mut column = Column::<CacheLine>::growable(n, n * 2);
    // The room is whole huge pages' worth.
    assert_eq!(column.len(), n);
    assert_eq!(
        column.capacity(),
        (n * 2 * 64).next_multiple_of(2 << 20) / 64
    );
    column[0].tags[0] = 1;
    column[n - 1].fragments[7] = 2;
    let at = column.as_ptr();
    assert!(column.grow_in_place(n * 3 / 2));
    assert_eq!((column.as_ptr(), column.len()), (at, n * 3 / 2));
    // Past its room: the map is lengthened, moved if it must be, and keeps the values.
    assert!(column.grow_in_place(n * 5));
    assert!(column.capacity() >= n * 5);
    assert_eq!((column[0].tags[0], column[n - 1].fragments[7]), (1, 2));
    let sum = |c: &Column<CacheLine>| -> u64 {
        c.iter()
            .flat_map(|l| l.tags.iter().chain(&l.fragments))
            .map(|&v| u64::from(v))
            .sum()
    };
    assert_eq!(sum(&column), 3, "the rest is zero");
    assert!(!column.grow_in_place(n), "never shorter");
    assert!(!Column::Owned(vec![CacheLine::default(); 4]).grow_in_place(8));
    // While a room of it is alive (backed on another thread), it grows within its map
    // only: the map may not move under the other thread.
    let room = column.room(n * 6).expect("pages to back");
    let capacity = column.capacity();
    assert!(capacity >= n * 6);
    assert!(!column.grow_in_place(capacity + 1));
    assert!(column.grow_in_place(n * 6));
    assert!(room.back());
    drop(room);
    assert!(column.grow_in_place(capacity + 1));
    assert_eq!(sum(&column), 3);
}

#[test]
#[cfg(target_os = "linux")]
fn pages_backed_ahead_of_a_growth_in_place_are_the_ones_it_fills() {
    let mut next = xorshift(0x7777_1111_5555_3333u64);
    let n = PREPARE_LINES * SLOTS;
    let entries: Vec<(u64, u32)> = (0..n as u32 * 2).map(|i| (next(), i)).collect();
    let mut table = Bucketed::build(24, vec![entries[0].0], vec![0]);
    let mut inserted = 1;
    // Grown past PREPARE_LINES, in memory that grows in place.
    while table.lines.len() < PREPARE_LINES || table.next_growth(0).is_none() {
        let (key, id) = entries[inserted];
        table.insert(key, id, 0);
        inserted += 1;
    }
    assert!(matches!(table.lines, Column::Grown { .. }));
    let lines = table.lines.len();
    let wanted = table.next_growth(0).unwrap();
    let before = table.bytes();
    let room = table
        .room_for(wanted)
        .expect("grows in place")
        .expect("pages to back");
    // Inserts go on while the pages are backed: the backing changes nothing they wrote.
    let (key, id) = entries[inserted];
    table.insert(key, id, 0);
    inserted += 1;
    assert!(room.back());
    table.backed_to(wanted);
    assert_eq!(
        table.bytes(),
        before + (wanted - lines) * std::mem::size_of::<CacheLine>()
    );
    assert_eq!(table.next_growth(0), None, "backed already");
    let at = table.lines.as_ptr();
    while table.lines.len() == lines {
        let (key, id) = entries[inserted];
        table.insert(key, id, 0);
        inserted += 1;
    }
    assert_eq!((table.lines.as_ptr(), table.lines.len()), (at, wanted));
    assert_eq!(resident_pages(&table.lines), (wanted * 64).div_ceil(4096));
    for &(key, id) in &entries[..inserted] {
        assert!(found(&table, key).contains(&id), "{key:x}");
    }
}

#[test]
#[cfg(target_os = "linux")]
fn pages_backed_on_another_thread_while_the_table_grows_into_them_lose_nothing() {
    let mut next = xorshift(0x2222_9999_4444_bbbbu64);
    let entries: Vec<(u64, u32)> = (0..3_000_000u32).map(|i| (next(), i)).collect();
    let mut table = Bucketed::build(24, vec![entries[0].0], vec![0]);
    let mut inserted = 1;
    for _ in 0..2 {
        // Near a growth of at least PREPARE_LINES lines, in memory that grows in place.
        while table.lines.len() < PREPARE_LINES || table.next_growth(0).is_none() {
            let (key, id) = entries[inserted];
            table.insert(key, id, 0);
            inserted += 1;
        }
        let lines = table.lines.len();
        let wanted = table.next_growth(0).unwrap();
        let room = table
            .room_for(wanted)
            .expect("grows in place")
            .expect("pages to back");
        // The pages are backed on another thread while this one inserts, grows into them
        // and goes on inserting.
        let backer = std::thread::spawn(move || room.back());
        while table.lines.len() == lines || !backer.is_finished() {
            let (key, id) = entries[inserted];
            table.insert(key, id, 0);
            inserted += 1;
        }
        assert!(backer.join().expect("the backing thread"));
        assert!(table.lines.len() >= wanted);
    }
    let mut want: Vec<(u32, u32)> = (entries[..inserted].iter())
        .map(|&(key, id)| (fragment(key), id + 1))
        .collect();
    want.sort_unstable();
    assert_eq!(entries_where_probes_find_them(&table), want);
}
