"""Scrapy downloader middleware that asks a crawldedup sidecar about every request and
every response, and drops what the crawl has already seen.

Before a request is downloaded, its URL goes to ``POST /v1/urls/check``: a URL whose
canonical form was seen before (tracking parameters, session ids, ``index.html``, case and
order of parameters folded away) or that is not crawlable is dropped with ``IgnoreRequest``.
After an HTML response arrives, its body goes to ``POST /v1/pages/check``: an exact or near
duplicate of a page the sidecar has already seen is dropped the same way, so the spider's
callback (and the item pipeline) only ever sees unique pages. The verdict is left in
``response.meta["crawldedup"]`` (the request's meta) for the callback.

Settings:

``CRAWLDEDUP_URL``
    The sidecar, for example ``http://127.0.0.1:8787`` (``crawldedup serve``).
``CRAWLDEDUP_TOKEN``
    Bearer token, when the sidecar was started with one (default: none).
``CRAWLDEDUP_TIMEOUT``
    Seconds to wait for the sidecar (default 10).
``CRAWLDEDUP_FAIL_OPEN``
    When the sidecar cannot be reached: ``False`` (default) stops the crawl, since every
    page would otherwise be kept; ``True`` lets requests and responses through.

Enable it in ``DOWNLOADER_MIDDLEWARES`` with a priority above 600 (closer to the
downloader than the redirect and retry middlewares), so that every redirect hop is checked
as a URL and only final responses are checked as pages::

    DOWNLOADER_MIDDLEWARES = {"crawldedup_middleware.CrawldedupMiddleware": 950}

The calls are synchronous HTTP on loopback (well under a millisecond for a URL, a few
milliseconds for a page of a few hundred kilobytes) over one kept-alive connection.
"""

import base64
import http.client
import json
import logging
import urllib.parse

from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured

logger = logging.getLogger(__name__)

#: Content types whose bodies are worth a page check; anything else passes untouched.
HTML_TYPES = (b"text/html", b"application/xhtml+xml")


class SidecarError(Exception):
    """The sidecar could not be reached or answered with an error."""


class Sidecar:
    """A minimal client of the crawldedup sidecar: one kept-alive connection."""

    def __init__(self, base_url, token=None, timeout=10.0):
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"CRAWLDEDUP_URL {base_url!r}: expected http://HOST:PORT")
        self.scheme = parsed.scheme
        self.host = parsed.hostname
        self.port = parsed.port
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.connection = None

    def _connect(self):
        cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        return cls(self.host, self.port, timeout=self.timeout)

    def call(self, method, path, payload=None):
        body = None if payload is None else json.dumps(payload).encode()
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = self._connect()
            try:
                self.connection.request(method, path, body=body, headers=self.headers)
                response = self.connection.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as e:
                # A kept-alive connection the server closed: reconnect once.
                self.connection.close()
                self.connection = None
                if attempt == 2:
                    raise SidecarError(f"{method} {path}: {e}") from e
                continue
            try:
                answer = json.loads(data)
            except ValueError as e:
                raise SidecarError(f"{method} {path}: not JSON ({e})") from e
            if response.status != 200:
                raise SidecarError(f"{method} {path}: HTTP {response.status}: {answer.get('error')}")
            return answer
        raise SidecarError(f"{method} {path}: no answer")

    def check_urls(self, urls):
        return self.call("POST", "/v1/urls/check", {"urls": list(urls)})["results"]

    def check_page(self, url, body, content_type):
        payload = {"url": url, "body_base64": base64.b64encode(body).decode("ascii")}
        if content_type:
            payload["content_type"] = content_type
        return self.call("POST", "/v1/pages/check", payload)

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class CrawldedupMiddleware:
    """Drops requests for URLs already seen and responses that repeat a page already seen."""

    def __init__(self, sidecar, stats, fail_open=False):
        self.sidecar = sidecar
        self.stats = stats
        self.fail_open = fail_open
        self.crawler = None

    @classmethod
    def from_crawler(cls, crawler):
        base = crawler.settings.get("CRAWLDEDUP_URL")
        if not base:
            raise NotConfigured("CRAWLDEDUP_URL is not set")
        sidecar = Sidecar(
            base,
            token=crawler.settings.get("CRAWLDEDUP_TOKEN"),
            timeout=crawler.settings.getfloat("CRAWLDEDUP_TIMEOUT", 10.0),
        )
        middleware = cls(sidecar, crawler.stats, crawler.settings.getbool("CRAWLDEDUP_FAIL_OPEN", False))
        middleware.crawler = crawler
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        return middleware

    def spider_closed(self, spider):
        self.sidecar.close()

    def _sidecar_failed(self, error, spider):
        self.stats.inc_value("crawldedup/sidecar_errors")
        if self.fail_open:
            logger.warning("crawldedup sidecar: %s (letting it through)", error)
            return
        logger.error("crawldedup sidecar: %s (stopping the crawl)", error)
        self.crawler.engine.close_spider(spider, "crawldedup_sidecar_unavailable")
        raise IgnoreRequest(f"crawldedup sidecar unavailable: {error}")

    def process_request(self, request, spider=None):
        # robots.txt requests (marked by Scrapy's RobotsTxtMiddleware) and requests that
        # opt out are not crawl pages.
        if request.meta.get("dont_obey_robotstxt") or request.meta.get("crawldedup_skip"):
            return None
        if request.meta.get("crawldedup_url_checked") == request.url:
            return None  # a retry of a URL already admitted
        try:
            [result] = self.sidecar.check_urls([request.url])
        except SidecarError as e:
            self._sidecar_failed(e, spider)
            return None
        self.stats.inc_value(f"crawldedup/url/{result['verdict']}")
        if result["verdict"] != "new":
            raise IgnoreRequest(f"crawldedup: URL {result['verdict']}: {request.url}")
        request.meta["crawldedup_url_checked"] = request.url
        return None

    def process_response(self, request, response, spider=None):
        if request.meta.get("dont_obey_robotstxt") or request.meta.get("crawldedup_skip"):
            return response
        content_type = response.headers.get(b"Content-Type", b"") or b""
        if response.status != 200 or not content_type.lower().startswith(HTML_TYPES):
            return response
        try:
            verdict = self.sidecar.check_page(response.url, response.body, content_type.decode("latin-1"))
        except SidecarError as e:
            self._sidecar_failed(e, spider)
            return response
        self.stats.inc_value(f"crawldedup/page/{verdict['verdict']}")
        if verdict["verdict"] in ("exact_duplicate", "near_duplicate"):
            raise IgnoreRequest(
                f"crawldedup: {verdict['verdict']} of {verdict.get('of')} "
                f"(distance {verdict.get('distance')}): {response.url}"
            )
        request.meta["crawldedup"] = verdict
        return response
