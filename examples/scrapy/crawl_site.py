"""A Scrapy crawl of one site with crawldedup: follows every link on the start URL's host
and writes one item per page it keeps (the unique ones) as JSON lines.

In process (``pip install .`` at the repository root installs the ``crawldedup`` package,
whose ``crawldedup.scrapy`` holds the dupefilter and the middleware)::

    python examples/scrapy/crawl_site.py --start https://example.com/ --out items.jsonl \
        [--jobdir job/]

Through a ``crawldedup serve`` sidecar instead (a separate process, for a crawler that cannot
load the package; ``crawldedup_middleware.py`` beside this file)::

    python examples/scrapy/crawl_site.py --start http://127.0.0.1:8000/ \
        --sidecar http://127.0.0.1:8787 --out items.jsonl [--token TOKEN]
"""

import argparse
import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import scrapy  # noqa: E402
from scrapy.crawler import CrawlerProcess  # noqa: E402


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, start, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]
        self.allowed_domains = [urllib.parse.urlsplit(start).hostname]

    def parse(self, response):
        verdict = response.meta.get("crawldedup", {})
        yield {
            "url": response.url,
            "title": response.css("title::text").get(),
            "simhash": verdict.get("simhash"),
        }
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", required=True)
    parser.add_argument("--sidecar", help="a crawldedup serve address (default: in process)")
    parser.add_argument("--jobdir", help="Scrapy's JOBDIR: pause with Ctrl-C, resume later")
    parser.add_argument("--out", required=True)
    parser.add_argument("--token")
    parser.add_argument("--depth", type=int, default=4)
    args = parser.parse_args()
    if args.sidecar:
        dedup = {
            "DOWNLOADER_MIDDLEWARES": {"crawldedup_middleware.CrawldedupMiddleware": 950},
            "CRAWLDEDUP_URL": args.sidecar,
            "CRAWLDEDUP_TOKEN": args.token,
        }
    else:
        dedup = {
            "DUPEFILTER_CLASS": "crawldedup.scrapy.DupeFilter",
            "DOWNLOADER_MIDDLEWARES": {"crawldedup.scrapy.NearDuplicateMiddleware": 950},
        }
        if args.jobdir:
            dedup["JOBDIR"] = args.jobdir
    process = CrawlerProcess(
        settings={
            **dedup,
            "ROBOTSTXT_OBEY": True,
            "DEPTH_LIMIT": args.depth,
            "CONCURRENT_REQUESTS": 8,
            "RETRY_TIMES": 1,
            "DOWNLOAD_TIMEOUT": 5,
            "LOG_LEVEL": "INFO",
            "TELNETCONSOLE_ENABLED": False,
            "FEEDS": {args.out: {"format": "jsonlines", "overwrite": True}},
        }
    )
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler, start=args.start)
    process.start()
    stats = crawler.stats.get_stats()
    # The middleware's counters, as one JSON line on stdout.
    counters = {
        k: v for k, v in stats.items() if k.startswith(("crawldedup/", "dupefilter/"))
    }
    print(json.dumps(counters, sort_keys=True))
    sidecar_errors = stats.get("crawldedup/sidecar_errors", 0)
    errors = stats.get("log_count/ERROR", 0)
    if sidecar_errors or errors:
        print(f"errors: {errors} logged, {sidecar_errors} from the sidecar", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
