"""A Scrapy crawl of the generated test site with crawldedup's components, for the tests.

    python site_spider.py --start URL --out items.jsonl [--jobdir DIR] [--stop-after N]
        [--keep-duplicates] [--state-dir DIR] [--responses FILE] [--pipeline]

Every page is an item (its URL, title, and the verdict the middleware left in its meta).
With --stop-after N the process sends itself SIGINT after N responses, as Ctrl-C would.
The crawler's stats are printed as one JSON line on stdout at the end.
"""

import argparse
import json
import os
import signal

import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, start, stop_after=0, responses=None, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]
        self.stop_after = stop_after
        self.responses = responses
        self.seen_responses = 0

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.response_received, signal=signals.response_received)
        return spider

    async def start(self):
        # Not `dont_filter` (Scrapy's default for start URLs): the start page is recorded
        # like any other, so that a link back to it is not fetched again.
        for url in self.start_urls:
            yield scrapy.Request(url)

    def response_received(self, response, request):
        if self.responses:
            with open(self.responses, "a") as f:
                f.write(response.url + "\n")
        self.seen_responses += 1
        if self.stop_after and self.seen_responses == self.stop_after:
            os.kill(os.getpid(), signal.SIGINT)

    def parse(self, response):
        if not hasattr(response, "css"):
            return
        yield {
            "url": response.url,
            "title": response.css("title::text").get(),
            "text": " ".join(response.css("p::text").getall()),
            "verdict": response.meta.get("crawldedup"),
        }
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--start", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--jobdir")
    parser.add_argument("--state-dir")
    parser.add_argument("--stop-after", type=int, default=0)
    parser.add_argument("--responses")
    parser.add_argument("--keep-duplicates", action="store_true")
    parser.add_argument("--pipeline", action="store_true")
    parser.add_argument("--durability", default="checkpoint")
    args = parser.parse_args()

    settings = {
        "DUPEFILTER_CLASS": "crawldedup.scrapy.DupeFilter",
        "DOWNLOADER_MIDDLEWARES": {"crawldedup.scrapy.NearDuplicateMiddleware": 950},
        "CRAWLDEDUP_DROP_DUPLICATES": not args.keep_duplicates,
        "CRAWLDEDUP_DURABILITY": args.durability,
        "CRAWLDEDUP_EXPECTED_URLS": 100_000,
        "FEEDS": {args.out: {"format": "jsonlines"}},
        "CONCURRENT_REQUESTS": 8,
        "ROBOTSTXT_OBEY": True,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "RETRY_ENABLED": False,
    }
    if args.jobdir:
        settings["JOBDIR"] = args.jobdir
    if args.state_dir:
        settings["CRAWLDEDUP_STATE_DIR"] = args.state_dir
    if args.pipeline:
        settings["ITEM_PIPELINES"] = {"crawldedup.scrapy.DuplicatePipeline": 300}
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler, start=args.start, stop_after=args.stop_after, responses=args.responses)
    process.start()
    print(json.dumps(crawler.stats.get_stats(), default=str))


if __name__ == "__main__":
    main()
