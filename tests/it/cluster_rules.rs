//! The shared index decides pages of one host by the local index's rules, on a real Redis
//! Cluster (see `common/redis_cluster.rs`): the same verdicts, page by page, from the
//! records as they travel through Redis.

use crate::cluster_index::doc;
use crate::redis_cluster::RedisCluster;

use crawldedup::cluster::filter::Cluster;
use crawldedup::cluster::index::{SharedDecision, SharedIndex};
use crawldedup::fingerprint::Blocks;
use crawldedup::index::{Decision, DocRecord, IndexConfig, SimhashIndex};

/// A page of `a.example` whose main text, as extracted, is `main`, and whose whole text is
/// `story` above `main`: its record carries the profile of its whole text's lines.
fn host_page(name: &str, story: &str, main: &str) -> DocRecord {
    let mut record = doc(name, main);
    let whole = format!("{story}\n\n{main}");
    record.blocks = Some(Blocks::of("a.example", &whole));
    record
}

/// `pages` decided in turn by a local index and by a shared index on a new cluster: the
/// verdicts as sentences, `unique` or `duplicate of NAME`, asserted the same on both.
fn decide_both(pages: &[DocRecord]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let config = IndexConfig::default().with_expected(1_000_000);
    let local = SimhashIndex::open(dir.path(), config).unwrap();
    let redis = RedisCluster::start();
    let cluster = Cluster::connect(&redis.urls()).unwrap();
    let shared = SharedIndex::open(&cluster, "nd", config).unwrap();
    let (mut local_names, mut shared_names) = (Vec::new(), Vec::new());
    // A decision as a sentence: `unique` (its id named `name` from now on), or a duplicate
    // of the page stored under `of`.
    let say = |names: &mut Vec<(u64, String)>, name: &str, unique: Result<u64, u64>| match unique {
        Ok(id) => {
            names.push((id, name.to_string()));
            "unique".to_string()
        }
        Err(of) => {
            let of = &names.iter().find(|(id, _)| *id == of).unwrap().1;
            format!("duplicate of {of}")
        }
    };
    let mut verdicts = Vec::new();
    for page in pages {
        let name = page.name.clone();
        let local_verdict = match local.check_and_insert(page.clone()).unwrap() {
            Decision::Unique(id) => say(&mut local_names, &name, Ok(id)),
            Decision::Exact(of) | Decision::Near { of, .. } => {
                say(&mut local_names, &name, Err(of))
            }
        };
        let shared_verdict = match shared.check_and_insert(page).unwrap() {
            SharedDecision::Unique(id) => say(&mut shared_names, &name, Ok(id)),
            SharedDecision::Exact(of) | SharedDecision::Near { of, .. } => {
                say(&mut shared_names, &name, Err(of))
            }
        };
        assert_eq!(local_verdict, shared_verdict, "{name}: local, then shared");
        verdicts.push(local_verdict);
    }
    verdicts
}

/// What the extraction kept of the pages below: the site's own box, word for word.
const BOX: &str = "About the garden club. We meet on the first Saturday of every month in the \
    community hall on Mill Street, share seeds and cuttings, and visit one member's garden \
    each summer.\nMembership is free for anyone who lives in the valley, and the newsletter \
    comes out four times a year with the dates of the next meetings.";

#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn the_shared_index_decides_pages_of_one_host_by_the_local_index_rule() {
    // Three pages whose stories differ, except that the third is the first with one word
    // changed.
    let story_a = "The apple harvest came two weeks early this year after the warm spring, and \
        the orchard on the east slope gave more fruit than it has in a decade.\nVolunteers \
        picked for three days and pressed most of the crop into juice for the autumn fair.";
    let story_b = "A hailstorm on Thursday night flattened the bean rows in the allotments \
        behind the school, and the tomatoes under glass were the only crop that came through \
        unharmed.\nThe committee will hand out new seedlings at the next meeting.";
    let story_c = story_a.replace("three days", "four days");
    let verdicts = decide_both(&[
        host_page("a/apples", story_a, BOX),
        host_page("a/hail", story_b, BOX),
        host_page("a/apples-again", &story_c, BOX),
    ]);
    // The second page has a story of its own: not the first page, though its main text is.
    assert_eq!(verdicts, ["unique", "unique", "duplicate of a/apples"]);
}

/// Pages whose main and whole texts are the site's box alone (extraction left their
/// stories out): the same digest. Two with headlines apart are two articles, on the shared
/// index as on the local one, where the digest's holder is judged; a third with the first
/// one's headline is its exact duplicate.
#[test]
#[ignore = "needs redis-server and redis-cli (apt-get install redis-server); CI runs it with --ignored"]
fn the_shared_index_tells_apart_pages_of_one_text_by_their_headlines_as_the_local_one() {
    let page = |name: &str, headline: &str| {
        let mut record = doc(name, BOX);
        record.blocks = Some(Blocks::of("a.example", BOX).with_headline(Some(headline)));
        record
    };
    let apples = "Apple harvest comes two weeks early after a warm spring";
    let verdicts = decide_both(&[
        page("a/apples", apples),
        page(
            "a/hail",
            "Hailstorm flattens the bean rows behind the school",
        ),
        page("a/apples?ref=feed", apples),
    ]);
    assert_eq!(verdicts, ["unique", "unique", "duplicate of a/apples"]);
}
