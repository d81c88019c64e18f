"""Fixtures of the Python package's tests: the crawldedup binary (for the generated test site
and the reference crawl) and the site itself, served on loopback."""

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _binary():
    explicit = os.environ.get("CRAWLDEDUP_BIN")
    if explicit:
        return Path(explicit)
    for profile in ("debug", "release"):
        candidate = ROOT / "target" / profile / "crawldedup"
        if candidate.exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def crawldedup_bin():
    """The crawldedup binary: $CRAWLDEDUP_BIN, else target/{debug,release}/crawldedup."""
    binary = _binary()
    if binary is None or not binary.exists():
        message = "the crawldedup binary is needed (cargo build, or set CRAWLDEDUP_BIN)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return binary


class Site:
    """The generated site, served by `crawldedup fixture-site`, with its request log."""

    def __init__(self, binary, tmp_path, per_topic=6):
        self.log = tmp_path / "requests.log"
        self.process = subprocess.Popen(
            [str(binary), "fixture-site", "--per-topic", str(per_topic), "--log", str(self.log)],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        assert line.startswith("listening on "), line
        self.url = line.split(" ", 2)[2].strip().rstrip("/")

    def requests(self):
        """Every request's path and query so far, in order."""
        if not self.log.exists():
            return []
        return self.log.read_text().splitlines()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def site(crawldedup_bin, tmp_path):
    served = Site(crawldedup_bin, tmp_path)
    yield served
    served.stop()


def content_key(url):
    """What a URL of the site holds: an article's copies share their article's key."""
    path = urlsplit(url).path.split(";")[0]
    parts = path.strip("/").split("/")
    if (len(parts) == 3 and parts[0] in ("topic", "mirror", "print", "discuss")
            and parts[2] != "index.html"):
        return f"article {parts[1]} {parts[2].removesuffix('.html')}"
    return path.removesuffix("index.html")


@pytest.fixture
def reference(crawldedup_bin, site, tmp_path):
    """crawldedup's own crawl of the site: the content keys of the pages it stored, sorted."""
    out = tmp_path / "reference"
    subprocess.run(
        [
            str(crawldedup_bin), "-q", "crawl", "--seed", site.url + "/",
            "--state-dir", str(out / "state"), "--out", str(out / "out"),
            "--allow-private-ips", "--set", "crawl.per_host_delay_ms=0",
            "--set", "crawl.concurrency=8", "--set", "crawl.per_host_concurrency=8",
        ],
        check=True,
    )
    pages = [json.loads(line) for line in (out / "out" / "pages.jsonl").read_text().splitlines()]
    # The site's log counts the Scrapy crawl's requests alone.
    site.log.write_text("")
    return sorted(content_key(p["url"]) for p in pages)


def run_spider(tmp_path, start, out, *extra, check=True):
    """Runs tests/site_spider.py in its own interpreter (a Twisted reactor runs once per
    process) and returns the completed process."""
    spider = Path(__file__).with_name("site_spider.py")
    process = subprocess.run(
        [sys.executable, str(spider), "--start", start, "--out", str(out), *map(str, extra)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    if check and process.returncode != 0:
        raise AssertionError(f"the spider failed:\n{process.stderr[-4000:]}")
    return process
