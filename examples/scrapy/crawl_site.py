"""A Scrapy crawl of one site through the crawldedup sidecar: follows every link on the
start URL's host and writes one item per page it keeps (the unique ones) as JSON lines.

    python examples/scrapy/crawl_site.py --start http://127.0.0.1:8000/ \
        --sidecar http://127.0.0.1:8787 --out items.jsonl [--token TOKEN]

Needs Scrapy (``pip install scrapy``) and a running ``crawldedup serve``.
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
    parser.add_argument("--sidecar", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--token")
    parser.add_argument("--depth", type=int, default=4)
    args = parser.parse_args()
    process = CrawlerProcess(
        settings={
            "DOWNLOADER_MIDDLEWARES": {"crawldedup_middleware.CrawldedupMiddleware": 950},
            "CRAWLDEDUP_URL": args.sidecar,
            "CRAWLDEDUP_TOKEN": args.token,
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
    print(json.dumps({k: v for k, v in stats.items() if k.startswith("crawldedup/")}, sort_keys=True))
    sidecar_errors = stats.get("crawldedup/sidecar_errors", 0)
    errors = stats.get("log_count/ERROR", 0)
    if sidecar_errors or errors:
        print(f"errors: {errors} logged, {sidecar_errors} from the sidecar", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
