"""Scrapy with crawldedup's components, on the generated test site served on loopback."""

import collections
import json

from scrapy import Request
from scrapy.settings import Settings

import crawldedup
from crawldedup.scrapy import DupeFilter
from conftest import content_key, run_spider


def read_items(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def fetched_twice(site):
    """The canonical URLs the site was asked for more than once (robots.txt aside, which
    Scrapy asks for at every start)."""
    counts = collections.Counter(
        crawldedup.canonicalize(site.url + path)
        for path in site.requests()
        if not path.startswith("/robots.txt")
    )
    return {url: n for url, n in counts.items() if n > 1}


def test_a_scrapy_crawl_keeps_each_page_once_and_fetches_each_url_once(site, reference, tmp_path):
    items = tmp_path / "items.jsonl"
    stats = json.loads(run_spider(tmp_path, site.url + "/", items).stdout.splitlines()[-1])
    kept = sorted(content_key(i["url"]) for i in read_items(items))
    assert kept == reference
    assert all(i["verdict"]["verdict"] == "unique" for i in read_items(items))
    # Tracking parameters, session ids, fragments and index.html: each fetched once.
    assert fetched_twice(site) == {}
    assert len(site.requests()) > len(reference)
    assert stats["dupefilter/filtered"] > 0, stats
    assert stats["crawldedup/url/seen"] > 0, stats
    assert stats["crawldedup/page/exact_duplicate"] > 0, stats
    assert stats["crawldedup/page/near_duplicate"] > 0, stats
    assert stats["crawldedup/page/unique"] == len(reference), stats
    # The figures of /metrics, in Scrapy's stats too.
    assert stats["crawldedup/index/documents"] == len(reference), stats
    assert stats["crawldedup/url_filter/urls"] >= stats["crawldedup/url/new"], stats
    assert 0 <= stats["crawldedup/url_filter/false_positive_rate"] < 0.01, stats
    assert 0 < stats["crawldedup/url_filter/fill_ratio"] <= 1, stats
    distances = {k: v for k, v in stats.items() if k.startswith("crawldedup/near_duplicate/distance/")}
    assert sum(distances.values()) == stats["crawldedup/page/near_duplicate"], stats
    assert 0.5 <= stats["crawldedup/near_duplicate/similarity_min"] <= 1, stats


def test_every_planted_copy_is_a_duplicate_of_its_original(site, reference, tmp_path):
    items = tmp_path / "items.jsonl"
    run_spider(tmp_path, site.url + "/", items, "--keep-duplicates")
    items = read_items(items)
    unique = collections.Counter(
        content_key(i["url"]) for i in items if i["verdict"]["verdict"] == "unique")
    assert unique == collections.Counter(reference)
    copies = [i for i in items if i["verdict"]["verdict"].endswith("_duplicate")]
    # Every article has a mirror and a print copy, at least.
    articles = [k for k in reference if k.startswith("article ")]
    assert len(copies) >= 2 * len(set(articles)), len(copies)
    for copy in copies:
        verdict = copy["verdict"]
        assert content_key(verdict["of"]) == content_key(copy["url"]), verdict
        # Found by simhash (within k bits) or by sketch band; confirmed on the sketch.
        assert verdict["similarity"] > 0.5 or verdict["containment"] > 0.8, verdict


def test_ctrl_c_then_a_resume_from_jobdir_fetches_nothing_twice(site, reference, tmp_path):
    jobdir = tmp_path / "job"
    first = tmp_path / "first.jsonl"
    stopped = run_spider(tmp_path, site.url + "/", first, "--jobdir", jobdir, "--stop-after", 15)
    stats = json.loads(stopped.stdout.splitlines()[-1])
    assert stats["finish_reason"] == "shutdown", stats
    assert (jobdir / "crawldedup").is_dir()
    fetched_before = len(site.requests())
    second = tmp_path / "second.jsonl"
    resumed = run_spider(tmp_path, site.url + "/", second, "--jobdir", jobdir)
    stats = json.loads(resumed.stdout.splitlines()[-1])
    assert stats["finish_reason"] == "finished", stats
    assert len(site.requests()) > fetched_before
    assert fetched_twice(site) == {}
    kept = sorted(content_key(i["url"]) for i in read_items(first) + read_items(second))
    assert kept == reference


def test_the_pipeline_drops_items_whose_text_repeats(site, tmp_path):
    items = tmp_path / "items.jsonl"
    stats = run_spider(tmp_path, site.url + "/", items, "--keep-duplicates", "--pipeline")
    stats = json.loads(stats.stdout.splitlines()[-1])
    assert stats["crawldedup/item/unique"] > 0, stats
    assert stats["crawldedup/item/exact_duplicate"] > 0, stats
    # Items with text (a page of links alone has none, and passes).
    texts = [i["text"] for i in read_items(items) if i["text"].strip()]
    assert len(texts) == len(set(texts))


def test_the_dupefilter_alone(tmp_path):
    settings = Settings({"JOBDIR": str(tmp_path / "job"), "CRAWLDEDUP_EXPECTED_URLS": 1000,
                         "CRAWLDEDUP_CONFIRM_ON_DISK": True})
    (tmp_path / "job").mkdir()
    df = DupeFilter.from_settings(settings)
    assert not df.request_seen(Request("https://a.test/x?utm_source=feed"))
    assert df.request_seen(Request("https://A.test/x#comments"))
    assert not df.request_seen(Request("https://a.test/x", dont_filter=True))
    assert not df.request_seen(Request("https://a.test/form", method="POST", body=b"q=1"))
    assert not df.request_seen(Request("https://a.test/form", method="POST", body=b"q=2"))
    assert df.request_seen(Request("https://a.test/form", method="POST", body=b"q=1"))
    assert not df.request_seen(Request("data:text/plain,hello"))
    assert df.request_seen(Request("data:text/plain,hello"))
    df.close("finished")
    # The job's state stays for the next run.
    again = DupeFilter.from_settings(settings)
    assert again.request_seen(Request("https://a.test/x"))
    assert not again.request_seen(Request("https://a.test/y"))
    again.close("finished")


def test_settings_reach_the_stage(tmp_path):
    settings = Settings({"CRAWLDEDUP_STATE_DIR": str(tmp_path / "s"),
                         "CRAWLDEDUP_STRIP_PARAMS": "ref,src",
                         "CRAWLDEDUP_SETTINGS": {"url_filter.fold_index": True}})
    df = DupeFilter.from_settings(settings)
    assert not df.request_seen(Request("https://a.test/x/index.html?ref=feed&src=mail&k=1"))
    assert df.request_seen(Request("https://a.test/x/?k=1"))
    # utm_* is no longer stripped: the list replaces the default one.
    assert not df.request_seen(Request("https://a.test/x/?k=1&utm_source=y"))
    df.close("finished")


def test_a_bad_setting_stops_the_component_in_one_line(tmp_path):
    from scrapy.exceptions import NotConfigured

    settings = Settings({"CRAWLDEDUP_STATE_DIR": str(tmp_path / "s"),
                         "CRAWLDEDUP_FALSE_POSITIVE_RATE": 2})
    try:
        DupeFilter.from_settings(settings)
    except NotConfigured as e:
        assert "false_positive_rate" in str(e) and "\n" not in str(e)
    else:
        raise AssertionError("a false-positive rate of 2 was taken")


def test_the_dupefilter_builds_as_scrapy_redis_builds_it(tmp_path):
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    crawler = get_crawler(Spider, {"CRAWLDEDUP_STATE_DIR": str(tmp_path / "state")})
    crawler.spider = crawler._create_spider("redis")
    crawler.stats.open_spider()
    df = DupeFilter.from_spider(crawler.spider)
    assert not df.request_seen(Request("https://a.test/?utm_campaign=x"))
    assert df.request_seen(Request("https://a.test/"))
    df.log(Request("https://a.test/"), crawler.spider)
    assert crawler.stats.get_value("dupefilter/filtered") == 1
    assert crawler.stats.get_value("crawldedup/url/seen") == 1
    df.clear()
    assert not (tmp_path / "state").exists()
