"""Scrapy components on the in-process page stage (Scrapy 2.13 and later).

``DupeFilter`` (for ``DUPEFILTER_CLASS``)
    Each request's URL is canonicalized (tracking and session parameters, ``index.html``,
    case and parameter order folded away) and checked against a Bloom filter sized for
    ``CRAWLDEDUP_EXPECTED_URLS`` at ``CRAWLDEDUP_FALSE_POSITIVE_RATE``: about 1.2 bytes per
    URL at 1 %, where Scrapy's ``RFPDupeFilter`` keeps a 20-byte fingerprint in a Python set
    (about 100 bytes with the set's overhead). With ``CRAWLDEDUP_CONFIRM_ON_DISK = True``
    every "seen" answer is confirmed against exact hashes on disk, so the filter never
    drops a request it has not seen. A request that is not a GET or HEAD, or has a body,
    is checked with its Scrapy fingerprint added to the URL, so that two POSTs to one
    address with different bodies are two requests.

``NearDuplicateMiddleware`` (a downloader middleware)
    Every 2xx HTML response goes through the page stage (boilerplate stripped, main text
    simhashed, near-duplicates confirmed on a MinHash sketch). A duplicate of a page seen
    before is dropped with ``IgnoreRequest``; with ``CRAWLDEDUP_DROP_DUPLICATES = False`` it
    goes on and the verdict is left in ``response.meta["crawldedup"]`` (as it is for
    every page checked). The work runs in the reactor's thread pool, with the GIL released.

``DuplicatePipeline`` (an item pipeline)
    Items whose ``CRAWLDEDUP_TEXT_FIELD`` (default ``"text"``) repeats an earlier item's
    are dropped with ``DropItem``; the URL is read from ``CRAWLDEDUP_URL_FIELD`` (default
    ``"url"``).

The components of one crawler share one stage and one state directory:
``CRAWLDEDUP_STATE_DIR``, else ``JOBDIR/crawldedup`` (so a paused and resumed job keeps what
it has seen), else a temporary directory removed when the crawl ends. Everything the stage
answered is saved at a checkpoint every ``CRAWLDEDUP_CHECKPOINT_EVERY`` seconds (default 60)
and when the spider closes (Ctrl-C included); with ``CRAWLDEDUP_DURABILITY = "answered"``
each answer is durable before the request or page goes on, at the cost of a flush.

Settings, each named after the configuration key it sets (``crawldedup config`` lists them
all; ``CRAWLDEDUP_SETTINGS`` takes any of them as a dict of ``"section.key": value``, and
``CRAWLDEDUP_CONFIG`` a crawler.toml file):

======================================  =================================
``CRAWLDEDUP_EXPECTED_URLS``            ``url_filter.expected_urls``
``CRAWLDEDUP_FALSE_POSITIVE_RATE``      ``url_filter.false_positive_rate``
``CRAWLDEDUP_CONFIRM_ON_DISK``          ``url_filter.confirm_on_disk``
``CRAWLDEDUP_STRIP_PARAMS``             ``url_filter.strip_params``
``CRAWLDEDUP_RECRAWL_AFTER``            ``url_filter.recrawl_after``
``CRAWLDEDUP_MAX_DISTANCE``             ``dedup.max_distance``
``CRAWLDEDUP_SHORT_TEXT_CHARS``         ``dedup.short_text_chars``
``CRAWLDEDUP_RETENTION``                ``dedup.retention``
``CRAWLDEDUP_EXPECTED_PAGES``           ``dedup.expected_pages``
======================================  =================================

Enable them in ``settings.py``::

    DUPEFILTER_CLASS = "crawldedup.scrapy.DupeFilter"
    DOWNLOADER_MIDDLEWARES = {"crawldedup.scrapy.NearDuplicateMiddleware": 950}
    ITEM_PIPELINES = {"crawldedup.scrapy.DuplicatePipeline": 300}

The middleware's priority above 600 puts it next to the downloader: it sees each response
before the redirect and retry middlewares, and checks only final 2xx pages.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

from scrapy import signals
from scrapy.exceptions import DropItem, IgnoreRequest, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.job import job_dir
from twisted.internet.threads import deferToThread

from . import Dedup, Error, PageVerdict

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response
    from scrapy.settings import BaseSettings

__all__ = ["DupeFilter", "DuplicatePipeline", "NearDuplicateMiddleware"]

logger = logging.getLogger(__name__)

#: Scrapy setting -> the configuration key it sets.
SETTINGS = {
    "CRAWLDEDUP_EXPECTED_URLS": "url_filter.expected_urls",
    "CRAWLDEDUP_FALSE_POSITIVE_RATE": "url_filter.false_positive_rate",
    "CRAWLDEDUP_CONFIRM_ON_DISK": "url_filter.confirm_on_disk",
    "CRAWLDEDUP_STRIP_PARAMS": "url_filter.strip_params",
    "CRAWLDEDUP_RECRAWL_AFTER": "url_filter.recrawl_after",
    "CRAWLDEDUP_MAX_DISTANCE": "dedup.max_distance",
    "CRAWLDEDUP_SHORT_TEXT_CHARS": "dedup.short_text_chars",
    "CRAWLDEDUP_RETENTION": "dedup.retention",
    "CRAWLDEDUP_EXPECTED_PAGES": "dedup.expected_pages",
}

#: Content types whose bodies are decided as pages; anything else passes untouched.
HTML_TYPES = (b"text/html", b"application/xhtml+xml")


def state_dir_of(settings: BaseSettings) -> Optional[str]:
    """Where the crawl's stage keeps its state: ``CRAWLDEDUP_STATE_DIR``, else
    ``JOBDIR/crawldedup``, else ``None`` (a temporary directory)."""
    explicit = settings.get("CRAWLDEDUP_STATE_DIR")
    if explicit:
        return str(explicit)
    jobdir = job_dir(settings)
    return os.path.join(jobdir, "crawldedup") if jobdir else None


def stage_options(settings: BaseSettings) -> Dict[str, Any]:
    """The keyword arguments of :class:`crawldedup.Dedup` that the settings give."""
    overrides: Dict[str, Any] = dict(settings.getdict("CRAWLDEDUP_SETTINGS"))
    for name, key in SETTINGS.items():
        value = settings.get(name)
        if value is None:
            continue
        # A list setting may come as "a,b" (from the command line's -s, say).
        overrides[key] = settings.getlist(name) if name == "CRAWLDEDUP_STRIP_PARAMS" else value
    durability = settings.get("CRAWLDEDUP_DURABILITY", "checkpoint")
    return {
        "config": settings.get("CRAWLDEDUP_CONFIG") or None,
        "settings": overrides,
        "durability": durability,
    }


class _Shared:
    """One stage per state directory in this process, shared by the components that name
    it, checkpointed now and then, and closed when the last of them lets go."""

    _lock = threading.Lock()
    _open: Dict[str, Tuple[Dedup, int]] = {}

    def __init__(self, settings: BaseSettings, owner: object) -> None:
        self.state_dir = state_dir_of(settings)
        # Without a state directory, the components of one crawler share a temporary one.
        self.key = self.state_dir or f"temporary:{id(owner)}"
        self.every = settings.getfloat("CRAWLDEDUP_CHECKPOINT_EVERY", 60.0)
        self.last_checkpoint = time.monotonic()
        with _Shared._lock:
            entry = _Shared._open.get(self.key)
            if entry is None:
                try:
                    stage = Dedup(self.state_dir, **stage_options(settings))
                except Error as e:
                    # One line, as Scrapy reports a component it cannot build.
                    raise NotConfigured(f"crawldedup: {e}") from None
                entry = (stage, 0)
            _Shared._open[self.key] = (entry[0], entry[1] + 1)
            self.stage = entry[0]
        self.released = False

    def maybe_checkpoint(self) -> None:
        if self.every > 0 and time.monotonic() - self.last_checkpoint >= self.every:
            self.last_checkpoint = time.monotonic()
            self.stage.checkpoint()

    def release(self, stats: Any = None) -> None:
        """Checkpoints; the last user closes the stage. The stage's figures go into
        `stats` (Scrapy's stats collector) first, when given."""
        if self.released:
            return
        self.released = True
        if stats is not None:
            record_stage(stats, self.stage.stats())
        with _Shared._lock:
            stage, users = _Shared._open[self.key]
            if users > 1:
                _Shared._open[self.key] = (stage, users - 1)
                stage.checkpoint()
                return
            del _Shared._open[self.key]
        stage.close()


def record_stage(stats: Any, figures: Dict[str, Any]) -> None:
    """The stage's figures, as ``/metrics`` gives them, under ``crawldedup/...`` in a
    Scrapy stats collector: the index and the URL filter as they are now."""
    stats.set_value("crawldedup/index/documents", figures["indexed_documents"])
    stats.set_value("crawldedup/candidates_refused", figures["candidates_refused"])
    stats.set_value("crawldedup/url_filter/urls", figures["seen_urls"])
    stats.set_value("crawldedup/url_filter/bytes", figures["seen_filter_bytes"])
    stats.set_value("crawldedup/url_filter/fill_ratio", figures["seen_fill_ratio"])
    stats.set_value("crawldedup/url_filter/false_positive_rate", figures["seen_fp_rate"])


def record_verdict(stats: Any, prefix: str, verdict: PageVerdict) -> None:
    """A page's verdict under ``crawldedup/{prefix}/{verdict}``, and a near-duplicate's
    distance (``crawldedup/near_duplicate/distance/{bits}``, one key per distance from 0
    to 64) and lowest resemblance."""
    stats.inc_value(f"crawldedup/{prefix}/{verdict.verdict}")
    if verdict.verdict == "near_duplicate":
        stats.inc_value(f"crawldedup/near_duplicate/distance/{verdict.distance}")
        stats.min_value("crawldedup/near_duplicate/similarity_min", verdict.similarity)


def _shared_for(crawler: Crawler) -> _Shared:
    """The stage of a crawler (owner key: the crawler, for a temporary directory)."""
    return _Shared(crawler.settings, crawler)


class DupeFilter:
    """A ``DUPEFILTER_CLASS`` on canonical URLs and a Bloom filter, kept on disk."""

    def __init__(self, shared: _Shared, debug: bool = False, crawler: Optional[Crawler] = None,
                 fingerprinter: Any = None) -> None:
        self.shared = shared
        self.debug = debug
        self.crawler = crawler
        self.fingerprinter = fingerprinter
        self.logdupes = True
        self.logger = logging.getLogger(__name__)
        # Requests whose URL is not crawlable (data:, about:), kept by Scrapy fingerprint.
        self._invalid: set = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> "DupeFilter":
        return cls(
            _shared_for(crawler),
            debug=crawler.settings.getbool("DUPEFILTER_DEBUG"),
            crawler=crawler,
            fingerprinter=crawler.request_fingerprinter,
        )

    @classmethod
    def from_spider(cls, spider: Any) -> "DupeFilter":
        """How scrapy-redis's scheduler builds its dupefilter."""
        return cls.from_crawler(spider.crawler)

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> "DupeFilter":
        """A filter without a crawler (no stats, URL-only keys for every request)."""
        return cls(_Shared(settings, settings), debug=settings.getbool("DUPEFILTER_DEBUG"))

    @property
    def stage(self) -> Dedup:
        return self.shared.stage

    def _key(self, request: Request) -> str:
        if request.method in ("GET", "HEAD") and not request.body:
            return request.url
        # The method and body are part of what makes the request.
        fingerprint = self._fingerprint(request)
        separator = "&" if "?" in request.url else "?"
        return f"{request.url}{separator}crawldedup-request={fingerprint}"

    def _fingerprint(self, request: Request) -> str:
        if self.fingerprinter is None:
            from scrapy.utils.request import RequestFingerprinter

            self.fingerprinter = RequestFingerprinter()
        return self.fingerprinter.fingerprint(request).hex()

    def request_seen(self, request: Request) -> bool:
        if request.dont_filter:
            return False
        verdict = self.stage.check_url(self._key(request))
        self._inc(f"crawldedup/url/{verdict.verdict}")
        self.shared.maybe_checkpoint()
        if verdict.verdict == "invalid":
            # Not a web URL: Scrapy decides what to do with it; repeats are still caught.
            fingerprint = self._fingerprint(request)
            if fingerprint in self._invalid:
                return True
            self._invalid.add(fingerprint)
            return False
        return verdict.verdict == "seen"

    def open(self) -> None:
        pass

    def close(self, reason: str) -> None:
        self.shared.release()

    def clear(self) -> None:
        """What scrapy-redis calls when the job does not persist (``SCHEDULER_PERSIST =
        False``): the stage is closed and its state directory removed."""
        self.shared.release()
        if self.shared.state_dir:
            shutil.rmtree(self.shared.state_dir, ignore_errors=True)

    def log(self, request: Request, spider: Any) -> None:
        if self.debug:
            msg = "Filtered duplicate request: %(request)s (referer: %(referer)s)"
            referer = request.headers.get("Referer")
            args = {"request": request, "referer": referer.decode() if referer else None}
            self.logger.debug(msg, args, extra={"spider": spider})
        elif self.logdupes:
            msg = (
                "Filtered duplicate request: %(request)s"
                " - no more duplicates will be shown"
                " (see DUPEFILTER_DEBUG to show all duplicates)"
            )
            self.logger.debug(msg, {"request": request}, extra={"spider": spider})
            self.logdupes = False
        self._inc("dupefilter/filtered")

    def _inc(self, key: str) -> None:
        if self.crawler is not None and self.crawler.stats is not None:
            self.crawler.stats.inc_value(key)


class NearDuplicateMiddleware:
    """A downloader middleware that drops responses repeating a page seen before."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.shared = _shared_for(crawler)
        self.drop = crawler.settings.getbool("CRAWLDEDUP_DROP_DUPLICATES", True)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> "NearDuplicateMiddleware":
        return cls(crawler)

    def spider_closed(self) -> None:
        self.shared.release(self.crawler.stats)

    def _decide(self, request: Request, response: Response) -> PageVerdict:
        content_type = response.headers.get(b"Content-Type")
        return self.shared.stage.check_page(
            response.url,
            body=response.body,
            content_type=content_type.decode("latin-1") if content_type else None,
        )

    async def process_response(self, request: Request, response: Response) -> Response:
        if not 200 <= response.status < 300 or request.meta.get("crawldedup_skip"):
            return response
        content_type = (response.headers.get(b"Content-Type") or b"").lower()
        if content_type and not content_type.startswith(HTML_TYPES):
            return response
        # Off the reactor's thread: extraction and the index run with the GIL released.
        verdict = await maybe_deferred_to_future(deferToThread(self._decide, request, response))
        stats = self.crawler.stats
        if stats is not None:
            record_verdict(stats, "page", verdict)
        self.shared.maybe_checkpoint()
        request.meta["crawldedup"] = verdict.to_dict()
        if verdict.is_duplicate and self.drop:
            logger.debug(
                "Dropped %s: %s of %s (distance %s, similarity %s)",
                response.url, verdict.verdict, verdict.of, verdict.distance, verdict.similarity,
            )
            raise IgnoreRequest(f"{response.url}: {verdict.verdict} of {verdict.of}")
        return response


class DuplicatePipeline:
    """An item pipeline that drops items whose text repeats an earlier item's."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.shared = _shared_for(crawler)
        self.text_field = crawler.settings.get("CRAWLDEDUP_TEXT_FIELD", "text")
        self.url_field = crawler.settings.get("CRAWLDEDUP_URL_FIELD", "url")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> "DuplicatePipeline":
        return cls(crawler)

    def close_spider(self) -> None:
        self.shared.release(self.crawler.stats)

    def process_item(self, item: Any) -> Any:
        from itemadapter import ItemAdapter

        adapter = ItemAdapter(item)
        text = adapter.get(self.text_field)
        if not isinstance(text, str):
            return item
        url = adapter.get(self.url_field)
        name = str(url) if url else f"item:{self.crawler.stats.get_value('item_scraped_count', 0)}"
        verdict = self.shared.stage.check_page(name, text=text)
        if self.crawler.stats is not None:
            record_verdict(self.crawler.stats, "item", verdict)
        self.shared.maybe_checkpoint()
        if verdict.is_duplicate:
            raise DropItem(f"{name}: {verdict.verdict} of {verdict.of}")
        return item
