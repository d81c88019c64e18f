"""The Python package against its peers, each measured in this run on this machine.

    python benches/peers/python_stage.py dupefilter N      # crawldedup.scrapy.DupeFilter vs
                                                          # Scrapy's RFPDupeFilter, N requests
    python benches/peers/python_stage.py pages DATASET     # page decisions vs datasketch
                                                          # MinHashLSH and rensa's LSH
    python benches/peers/python_stage.py sidecar DATASET BIN  # in process vs crawldedup serve

DATASET is ../shared/datasets/wcxb-dev; BIN the crawldedup binary (for the sidecar). The
Python needs crawldedup (``pip install .``), Scrapy, datasketch and rensa.

dupefilter: each filter runs in a child process of its own, fed the same stream of Scrapy
requests (N URLs over 1,000 hosts, one in ten a repeat of an earlier one, with tracking
parameters on one in five). The time is that of ``request_seen`` alone (the requests are made
in batches outside the timed part); the memory is the child's resident set after the run
less before the filter was made, per distinct URL.

pages: the long (>= 500 characters) ground-truth main texts of the dataset, each followed
later in the stream by edited copies (an added sentence, 2 % of words replaced, a reader's
comment appended, the date changed), decided one by one: a duplicate of anything seen, or
new and recorded. A copy called a duplicate is a true positive; an original called a
duplicate is a false positive unless its word 3-shingle Jaccard similarity with the text it
was matched to is 0.5 or more (the dataset's own near-duplicates). Both peers use 128
permutations over the same word 3-shingles, at a Jaccard threshold of 0.5.

sidecar: the dataset's HTML pages decided by ``Dedup.check_page`` in process and by
``POST /v1/pages/check`` on a ``crawldedup serve`` on loopback (one kept-alive connection,
the body in base64, as the sidecar middleware sends it); then 100,000 URLs by
``Dedup.check_urls`` and by ``POST /v1/urls/check``, in batches of 100.
"""

import base64
import gzip
import http.client
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


# ---------------------------------------------------------------------------------------
# dupefilter


def request_urls(n, seed=1):
    rng = random.Random(seed)
    made = []
    for i in range(n):
        if made and rng.random() < 0.1:
            url = made[rng.randrange(len(made))]
            if rng.random() < 0.5:
                url += ("&" if "?" in url else "?") + "utm_source=feed"
        else:
            host = rng.randrange(1000)
            url = f"https://www.site{host}.example/section/{i % 97}/article-{i}.html"
            if rng.random() < 0.2:
                url += "?utm_medium=social&id=%d" % (i % 13)
            if len(made) < 200_000:
                made.append(url)
            elif rng.random() < 0.01:
                made[rng.randrange(len(made))] = url
        yield url


def dupefilter_child(kind, n):
    from scrapy import Request
    from scrapy.dupefilters import RFPDupeFilter
    from scrapy.settings import Settings

    state = tempfile.mkdtemp(prefix="df-bench-")
    # Before the filter is made: crawldedup's Bloom filter takes its memory at the start.
    before = rss_bytes()
    if kind == "crawldedup":
        from crawldedup.scrapy import DupeFilter

        df = DupeFilter.from_settings(Settings({
            "CRAWLDEDUP_STATE_DIR": state,
            "CRAWLDEDUP_EXPECTED_URLS": n,
            "CRAWLDEDUP_FALSE_POSITIVE_RATE": 0.001,
        }))
    elif kind == "crawldedup-exact":
        from crawldedup.scrapy import DupeFilter

        df = DupeFilter.from_settings(Settings({
            "CRAWLDEDUP_STATE_DIR": state,
            "CRAWLDEDUP_EXPECTED_URLS": n,
            "CRAWLDEDUP_FALSE_POSITIVE_RATE": 0.001,
            "CRAWLDEDUP_CONFIRM_ON_DISK": True,
        }))
    else:
        df = RFPDupeFilter()
    seen = filtered = 0
    spent = 0.0
    batch = []
    stream = request_urls(n)
    while True:
        batch = [Request(u) for _, u in zip(range(10_000), stream)]
        if not batch:
            break
        start = time.perf_counter()
        for request in batch:
            if df.request_seen(request):
                filtered += 1
        spent += time.perf_counter() - start
        seen += len(batch)
        del batch
    after = rss_bytes()
    df.close("finished")
    distinct = seen - filtered
    print(json.dumps({
        "kind": kind, "requests": seen, "filtered": filtered,
        "us_per_request_seen": spent / seen * 1e6,
        "bytes_per_url": (after - before) / max(distinct, 1),
        "rss_mib": after / 2**20,
    }))


def dupefilter(n):
    results = {}
    for kind in ("rfp", "crawldedup", "crawldedup-exact"):
        out = subprocess.run(
            [sys.executable, __file__, "dupefilter-child", kind, str(n)],
            capture_output=True, text=True, check=True,
        ).stdout.strip().splitlines()[-1]
        results[kind] = json.loads(out)
        r = results[kind]
        print(f"{kind:17} {r['requests']:>10,} requests, {r['filtered']:>9,} filtered: "
              f"{r['us_per_request_seen']:6.2f} us per request_seen, "
              f"{r['bytes_per_url']:7.1f} bytes per URL (RSS {r['rss_mib']:.0f} MiB)")
    ours, peer = results["crawldedup"], results["rfp"]
    print(f"crawldedup / RFPDupeFilter: {peer['us_per_request_seen'] / ours['us_per_request_seen']:.2f}x "
          f"faster, {peer['bytes_per_url'] / max(ours['bytes_per_url'], 0.01):.1f}x less memory "
          f"per URL; filtered {ours['filtered']:,} against {peer['filtered']:,} "
          "(tracking-parameter variants are one URL to crawldedup)")


# ---------------------------------------------------------------------------------------
# pages


def load_texts(dataset):
    meta = json.loads((Path(dataset) / "metadata.json").read_text())
    texts = []
    for name in sorted(meta["files"]):
        truth = Path(dataset) / "dev" / "ground-truth" / f"{name}.json"
        if not truth.exists():
            continue
        record = json.loads(truth.read_text())
        text = record.get("ground_truth", {}).get("main_content") or record.get("main_content") or ""
        if len(text) >= 500:
            texts.append(text)
    return texts


WORD = re.compile(r"\w+", re.UNICODE)


def shingles(text):
    words = [w.lower() for w in WORD.findall(text)]
    return {" ".join(words[i:i + 3]) for i in range(max(len(words) - 2, 1))}


def edits(text, rng):
    words = text.split(" ")
    replaced = list(words)
    for _ in range(max(1, len(words) // 50)):
        replaced[rng.randrange(len(replaced))] = "quokka"
    return [
        ("added sentence", text + "\n\nThis article was updated with a statement from the council."),
        ("2% of words replaced", " ".join(replaced)),
        ("a comment appended", text + "\n\nReader comment: I grew up near there and this is exactly how it was, thanks for writing it."),
        ("date changed", re.sub(r"\b(19|20)\d\d\b", "2031", text) if re.search(r"\b(19|20)\d\d\b", text)
         else "Updated 3 March 2031.\n\n" + text),
    ]


def stream(texts):
    rng = random.Random(7)
    items = [("original", i, t) for i, t in enumerate(texts)]
    copies = []
    for i, t in enumerate(texts):
        for kind, copy in edits(t, rng):
            copies.append((kind, i, copy))
    rng.shuffle(copies)
    # Every copy comes after its original: originals first, copies after, each in turn.
    return items + copies


def score(name, decisions, items, texts, seconds):
    sets = {}

    def sh(i):
        if i not in sets:
            sets[i] = shingles(texts[i])
        return sets[i]

    tp = fp = fn = 0
    for (kind, i, _), matched in zip(items, decisions):
        if kind == "original":
            if matched is not None:
                j = matched
                a, b = sh(i), sh(j)
                if len(a & b) / max(len(a | b), 1) >= 0.5:
                    tp += 1
                else:
                    fp += 1
        elif matched is not None:
            tp += 1
        else:
            fn += 1
    copies = sum(1 for k, _, _ in items if k != "original")
    precision = tp / max(tp + fp, 1)
    recall = (copies - fn) / copies
    print(f"{name:22} {len(items) / seconds:9.0f} decisions/s   precision {precision:.4f}   "
          f"recall {recall:.4f} ({fp} false duplicates, {fn} copies missed)")
    return len(items) / seconds


def pages(dataset):
    import crawldedup
    from datasketch import MinHash, MinHashLSH
    from rensa import RMinHash, RMinHashLSH

    texts = load_texts(dataset)
    items = stream(texts)
    print(f"{len(texts)} texts of 500 characters or more, {len(items) - len(texts)} edited copies")
    rates = {}

    # crawldedup: the stage, on the main text as it is.
    with crawldedup.Dedup(durability="checkpoint") as dedup:
        names = {}
        decisions = []
        start = time.perf_counter()
        for n, (kind, i, text) in enumerate(items):
            verdict = dedup.check_page(f"doc:{n}", text=text)
            if verdict.is_duplicate:
                decisions.append(names[verdict.of])
            else:
                names[f"doc:{n}"] = i
                decisions.append(None)
        rates["crawldedup"] = score("crawldedup", decisions, items, texts, time.perf_counter() - start)

    # datasketch: MinHash of the word 3-shingles, an LSH at Jaccard 0.5.
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    keys = {}
    decisions = []
    start = time.perf_counter()
    for n, (kind, i, text) in enumerate(items):
        m = MinHash(num_perm=128)
        m.update_batch([s.encode() for s in shingles(text)])
        found = lsh.query(m)
        if found:
            decisions.append(keys[found[0]])
        else:
            lsh.insert(str(n), m)
            keys[str(n)] = i
            decisions.append(None)
    rates["datasketch"] = score("datasketch MinHashLSH", decisions, items, texts, time.perf_counter() - start)

    # rensa: the same, with its Rust MinHash and LSH.
    lsh = RMinHashLSH(threshold=0.5, num_perm=128, num_bands=16)
    keys = {}
    decisions = []
    start = time.perf_counter()
    for n, (kind, i, text) in enumerate(items):
        m = RMinHash(num_perm=128, seed=42)
        m.update(list(shingles(text)))
        found = lsh.query(m)
        if found:
            decisions.append(keys[found[0]])
        else:
            lsh.insert(n, m)
            keys[n] = i
            decisions.append(None)
    rates["rensa"] = score("rensa RMinHashLSH", decisions, items, texts, time.perf_counter() - start)
    print(f"crawldedup / datasketch: {rates['crawldedup'] / rates['datasketch']:.1f}x; "
          f"crawldedup / rensa: {rates['crawldedup'] / rates['rensa']:.2f}x (decisions per second)")


# ---------------------------------------------------------------------------------------
# sidecar


def html_pages(dataset):
    pages = []
    for path in sorted((Path(dataset) / "dev" / "html").glob("*.html.gz")):
        pages.append((f"https://page.test/{path.name}", gzip.decompress(path.read_bytes())))
    return pages


class Sidecar:
    def __init__(self, base):
        host, port = base.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=30)

    def post(self, path, payload):
        self.connection.request("POST", path, body=json.dumps(payload),
                                headers={"Content-Type": "application/json"})
        response = self.connection.getresponse()
        answer = json.loads(response.read())
        assert response.status == 200, answer
        return answer


def sidecar(dataset, binary):
    import crawldedup

    pages = html_pages(dataset)
    total = sum(len(b) for _, b in pages)
    urls = [f"https://www.site{i % 1000}.example/a/{i}?utm_source=x" for i in range(100_000)]
    state = tempfile.mkdtemp(prefix="sidecar-bench-")
    server = subprocess.Popen(
        [binary, "-q", "serve", "--listen", "127.0.0.1:0", "--state-dir", os.path.join(state, "s"),
         "--durability", "checkpoint"],
        stdout=subprocess.PIPE, text=True)
    base = server.stdout.readline().strip().removeprefix("listening on ")
    client = Sidecar(base)
    try:
        start = time.perf_counter()
        for url, body in pages:
            client.post("/v1/pages/check", {"url": url, "body_base64": base64.b64encode(body).decode()})
        sidecar_pages = len(pages) / (time.perf_counter() - start)
        start = time.perf_counter()
        for k in range(0, len(urls), 100):
            client.post("/v1/urls/check", {"urls": urls[k:k + 100]})
        sidecar_urls = len(urls) / (time.perf_counter() - start)
    finally:
        server.terminate()
        server.wait()
    with crawldedup.Dedup(os.path.join(state, "p"), durability="checkpoint") as dedup:
        start = time.perf_counter()
        for url, body in pages:
            dedup.check_page(url, body=body)
        inproc_pages = len(pages) / (time.perf_counter() - start)
        start = time.perf_counter()
        for k in range(0, len(urls), 100):
            dedup.check_urls(urls[k:k + 100])
        inproc_urls = len(urls) / (time.perf_counter() - start)
    print(f"{len(pages)} HTML pages ({total / 2**20:.1f} MiB), one thread, durability checkpoint")
    print(f"pages: in process {inproc_pages:7.0f}/s, sidecar {sidecar_pages:7.0f}/s: "
          f"{inproc_pages / sidecar_pages:.2f}x")
    print(f"URLs:  in process {inproc_urls:7.0f}/s, sidecar {sidecar_urls:7.0f}/s: "
          f"{inproc_urls / sidecar_urls:.2f}x (batches of 100)")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "dupefilter":
        dupefilter(int(sys.argv[2]))
    elif command == "dupefilter-child":
        dupefilter_child(sys.argv[2], int(sys.argv[3]))
    elif command == "pages":
        pages(sys.argv[2])
    elif command == "sidecar":
        sidecar(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
