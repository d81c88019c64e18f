//! The crawler built without the `cluster` feature: a crawl on one machine. The worker of a
//! crawl on several machines cannot exist here (its type has no value), so the loop's
//! cluster branches are never taken; a configuration that names a Redis Cluster is refused
//! at the start.

use std::convert::Infallible;
use std::marker::PhantomData;

use url::Url;

use super::error::CrawlError;
use super::frontier::Frontier;
use super::record::CheckpointRecord;
use crate::config::Config;
use crate::dedup::{Dedup, PageVerdict};
use crate::page::Prepared;

/// A Redis Cluster connection: none in this build.
pub(crate) enum Cluster {}

/// `None` unless the configuration names a Redis Cluster, which this build refuses.
pub(crate) fn connect(config: &Config) -> Result<Option<Cluster>, CrawlError> {
    if config.cluster.enabled() {
        return Err(CrawlError::Setup(
            "cluster.nodes: this build of crawldedup has no cluster support (the `cluster` \
             feature)"
                .into(),
        ));
    }
    Ok(None)
}

/// The worker of a crawl on several machines: no value of it exists in this build.
pub(crate) struct Worker<'c> {
    never: Infallible,
    _cluster: PhantomData<&'c Cluster>,
}

#[allow(clippy::unused_self)]
impl<'c> Worker<'c> {
    pub(crate) fn start(
        cluster: &'c Cluster,
        _config: &Config,
        _meta: &sled::Tree,
        _committed: u64,
        _dedup: &Dedup,
        _frontier: &mut Frontier,
    ) -> Result<Worker<'c>, CrawlError> {
        match *cluster {}
    }

    pub(crate) fn label(&self) -> String {
        match self.never {}
    }

    pub(crate) fn tick(
        &mut self,
        _dedup: &Dedup,
        _frontier: &mut Frontier,
        _idle: bool,
    ) -> Result<(), CrawlError> {
        match self.never {}
    }

    pub(crate) fn enqueue(
        &mut self,
        _dedup: &Dedup,
        _frontier: &mut Frontier,
        _links: Vec<(Url, u32, u32)>,
    ) -> Result<usize, CrawlError> {
        match self.never {}
    }

    pub(crate) fn decide(
        &mut self,
        _dedup: &Dedup,
        _name: &str,
        _prepared: &Prepared,
    ) -> Result<PageVerdict, CrawlError> {
        match self.never {}
    }

    pub(crate) fn before_checkpoint(
        &mut self,
        _frontier: &Frontier,
        _totals: &CheckpointRecord,
        _meta: &sled::Tree,
    ) -> Result<(), CrawlError> {
        match self.never {}
    }

    pub(crate) fn after_checkpoint(&mut self, _meta: &sled::Tree) -> Result<(), CrawlError> {
        match self.never {}
    }

    pub(crate) fn unsent(&self) -> bool {
        match self.never {}
    }

    pub(crate) fn crawl_done(&self) -> bool {
        match self.never {}
    }

    pub(crate) fn watch_figures(&self) -> (usize, Option<u64>) {
        match self.never {}
    }

    pub(crate) fn hand_over(&mut self, _frontier: &mut Frontier) {
        match self.never {}
    }

    pub(crate) fn leave(self) -> Result<(), CrawlError> {
        match self.never {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_naming_a_cluster_is_refused_in_one_line() {
        let mut config = Config::default();
        assert!(connect(&config).unwrap().is_none());
        config.cluster.nodes = vec!["redis://127.0.0.1:7000".into()];
        let e = connect(&config).err().unwrap().to_string();
        assert!(
            e.contains("cluster.nodes") && e.contains("`cluster` feature"),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1);
    }
}
