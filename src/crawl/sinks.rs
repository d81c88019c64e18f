//! The crawl's sinks: its own files and those given to the crawler, each handed every
//! decision in order, checkpointed and resumed together.

use std::time::Instant;

use super::error::CrawlError;
use super::record::CheckpointRecord;
use crate::store::files::FileSink;
use crate::store::{DuplicatePage, FailedPage, PageSink, SinkError, StoredPage};

/// The crawl's sinks: its files first, then those given to the crawler, each handed every
/// decision in order.
pub(crate) struct Sinks {
    pub(super) files: FileSink,
    pub(super) given: Vec<Box<dyn PageSink>>,
}

/// A sink's error as the crawl's: the file sink's own errors keep their kind (and exit
/// code), another sink's becomes [`CrawlError::Sink`].
pub(super) fn sink_error(e: SinkError) -> CrawlError {
    match e.downcast::<crate::store::files::FileError>() {
        Ok(e) => CrawlError::Files(*e),
        Err(e) => CrawlError::Sink(e),
    }
}

impl Sinks {
    pub(super) fn all(&mut self) -> impl Iterator<Item = &mut dyn PageSink> {
        std::iter::once(&mut self.files as &mut dyn PageSink).chain(
            self.given
                .iter_mut()
                .map(|s| s.as_mut() as &mut dyn PageSink),
        )
    }

    pub(super) fn page(&mut self, page: &StoredPage) -> Result<(), CrawlError> {
        self.all()
            .try_for_each(|s| s.page(page))
            .map_err(sink_error)
    }

    pub(super) fn duplicate(&mut self, duplicate: &DuplicatePage) -> Result<(), CrawlError> {
        self.all()
            .try_for_each(|s| s.duplicate(duplicate))
            .map_err(sink_error)
    }

    pub(super) fn failure(&mut self, failure: &FailedPage) -> Result<(), CrawlError> {
        self.all()
            .try_for_each(|s| s.failure(failure))
            .map_err(sink_error)
    }

    /// Each sink's position, into the record.
    pub(super) fn checkpoint(&mut self, totals: &mut CheckpointRecord) -> Result<(), CrawlError> {
        let files = self.files.checkpoint().map_err(sink_error)?;
        (totals.output_bytes, totals.warc) = FileSink::lengths(&files).map_err(sink_error)?;
        totals.sinks = self
            .given
            .iter_mut()
            .map(|s| s.checkpoint())
            .collect::<Result<_, _>>()
            .map_err(sink_error)?;
        Ok(())
    }

    /// Each sink back to the position the record holds for it.
    pub(super) fn resume(&mut self, totals: &CheckpointRecord) -> Result<(), CrawlError> {
        let files = FileSink::position(totals.output_bytes, totals.warc);
        self.files.resume(Some(&files)).map_err(sink_error)?;
        for (i, sink) in self.given.iter_mut().enumerate() {
            sink.resume(totals.sinks.get(i)).map_err(sink_error)?;
        }
        Ok(())
    }

    /// The earliest time a sink wants to be called again.
    pub(super) fn idle(&mut self) -> Result<Option<Instant>, CrawlError> {
        let mut due: Option<Instant> = None;
        for sink in self.all() {
            if let Some(at) = sink.idle().map_err(sink_error)? {
                due = Some(due.map_or(at, |d| d.min(at)));
            }
        }
        Ok(due)
    }
}
