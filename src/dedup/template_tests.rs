//! Tests of the host templates: learning, decay, bounds, saving.

use super::*;

fn page(story: &str) -> String {
    format!(
        "Latest news\n\n- Storm closes 12 schools\n- Council votes on budget\n\n{story}\n\n\
         Share this article\n\nMore in World\n\nUpdated 3 hours ago"
    )
}

#[test]
fn blocks_normalise_case_spacing_and_numbers() {
    assert_eq!(
        block_key("Updated 3 hours ago"),
        block_key("updated  15 hours ago")
    );
    assert_ne!(
        block_key("Updated 3 hours ago"),
        block_key("Updated 3 days ago")
    );
    assert_eq!(block_key("   "), None);
}

#[test]
fn a_host_template_is_learned_after_four_pages_and_dropped_from_the_fifth() {
    let t = HostTemplates::default();
    for i in 0..3 {
        t.learn(
            "news.example",
            &page(&format!("Story {i} about the harbour.")),
        );
        assert_eq!(
            t.strip("news.example", &page("Another story.")),
            Stripped::Untouched,
            "{i}"
        );
    }
    t.learn("news.example", &page("Story 3 about the harbour."));
    assert_eq!(
        t.strip("news.example", &page("A brief about a fire.")),
        Stripped::Rest("A brief about a fire.".to_string())
    );
    // Another host knows nothing of it.
    assert_eq!(
        t.strip("other.example", &page("A brief.")),
        Stripped::Untouched
    );
    // A text that is all template has nothing of its own.
    assert_eq!(t.strip("news.example", &page("")), Stripped::AllTemplate);
}

#[test]
fn a_block_that_stops_recurring_decays_out_of_the_template() {
    let t = HostTemplates::default();
    for i in 0..10 {
        t.learn("a.example", &format!("Old rail\n\nStory {i} words"));
    }
    assert!(matches!(
        t.strip("a.example", "Old rail\n\nNew story"),
        Stripped::Rest(_)
    ));
    for i in 0..40 {
        t.learn("a.example", &format!("New rail\n\nStory {} words", 100 + i));
    }
    assert_eq!(
        t.strip("a.example", "Old rail\n\nNew story"),
        Stripped::Untouched
    );
    assert!(matches!(
        t.strip("a.example", "New rail\n\nNew story"),
        Stripped::Rest(_)
    ));
}

#[test]
fn a_table_is_bounded_and_reads_back_as_saved() {
    let t = HostTemplates::default();
    for i in 0..50 {
        let text: String = (0..400)
            .map(|j| format!("block {} of page\n", i * 400 + j))
            .collect();
        t.learn("big.example", &format!("Menu line\n{text}"));
    }
    let (hosts, blocks) = t.size();
    assert_eq!(hosts, 1);
    assert!(blocks <= MAX_BLOCKS, "{blocks}");
    assert!(matches!(
        t.strip("big.example", "Menu line\nfresh text"),
        Stripped::Rest(_)
    ));
    let dir = tempfile::tempdir().unwrap();
    t.save(dir.path()).unwrap();
    let back = HostTemplates::open(dir.path()).unwrap();
    assert_eq!(back.size(), t.size());
    assert!(matches!(
        back.strip("big.example", "Menu line\nfresh text"),
        Stripped::Rest(_)
    ));
    // Any byte changed or cut is refused.
    let bytes = std::fs::read(dir.path().join(TEMPLATES_FILE)).unwrap();
    for at in [0, 9, bytes.len() / 2, bytes.len() - 1] {
        let mut bad = bytes.clone();
        bad[at] ^= 1;
        assert!(HostTemplates::decode(&bad).is_err(), "{at}");
    }
    assert!(HostTemplates::decode(&bytes[..bytes.len() / 2]).is_err());
}

#[test]
fn a_hosts_recent_pages_are_its_last_ones_and_read_back_as_saved() {
    let t = HostTemplates::default();
    for id in 0..40u64 {
        t.remember(
            if id % 2 == 0 {
                "a.example"
            } else {
                "b.example"
            },
            id,
        );
    }
    let evens: Vec<u64> = (0..40).filter(|i| i % 2 == 0).collect();
    assert_eq!(t.recent("a.example"), evens[evens.len() - RECENT_PAGES..]);
    assert!(t.recent("c.example").is_empty());
    let dir = tempfile::tempdir().unwrap();
    t.save(dir.path()).unwrap();
    let back = HostTemplates::open(dir.path()).unwrap();
    assert_eq!(back.recent("a.example"), t.recent("a.example"));
    assert_eq!(back.recent("b.example"), t.recent("b.example"));
}

#[test]
fn a_table_saved_before_recent_pages_were_kept_reads_with_none() {
    let t = HostTemplates::default();
    for i in 0..5 {
        t.learn("a.example", &page(&format!("Story {i} about the harbour.")));
    }
    // The first format: the same hosts and blocks, no recent pages after each host.
    let mut old = MAGIC_V1.to_vec();
    for shard in t.shards.iter() {
        for (host, table) in shard.lock().unwrap().iter() {
            old.extend_from_slice(&host.to_le_bytes());
            old.extend_from_slice(&table.pages.to_le_bytes());
            old.extend_from_slice(&(table.blocks.len() as u32).to_le_bytes());
            for (key, block) in &table.blocks {
                old.extend_from_slice(&key.to_le_bytes());
                old.extend_from_slice(&block.score.to_le_bytes());
                old.extend_from_slice(&block.last.to_le_bytes());
            }
        }
    }
    let check = xxhash_rust::xxh3::xxh3_64(&old);
    old.extend_from_slice(&check.to_le_bytes());
    let back = HostTemplates::decode(&old).unwrap();
    assert_eq!(back.size(), t.size());
    assert!(matches!(
        back.strip("a.example", &page("A brief about a fire.")),
        Stripped::Rest(_)
    ));
    assert!(back.recent("a.example").is_empty());
}
