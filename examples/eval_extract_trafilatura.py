"""Runs trafilatura on WCXB dev pages for `eval_extract` (which scores the output and times
the rounds of both tools in turn).

usage: python eval_extract_trafilatura.py DATASET OUT.jsonl ID,ID,...

Reads and gunzips the pages once, then runs one round over all of them for each line
`run` it reads on stdin, until stdin closes. The first round's texts go to OUT.jsonl, one
JSON line per page ({"id", "text"}). After each round it prints one JSON line on stdout,
{"seconds": [...]}: the time each page spent inside trafilatura.extract, in the order of
the ids (reading and gunzipping are not timed).
"""
import gzip
import json
import os
import sys
import time

import trafilatura


def main():
    dataset, out_path, ids = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    with open(os.path.join(dataset, "metadata.json")) as f:
        files = json.load(f)["files"]
    pages = []
    for page_id in ids:
        with gzip.open(os.path.join(dataset, "dev", "html", page_id + ".html.gz")) as f:
            pages.append((page_id, f.read(), files.get(page_id, {}).get("url")))
    first = True
    for line in sys.stdin:
        if line.strip() != "run":
            sys.exit(f"unknown command {line.strip()!r}")
        seconds = []
        texts = []
        for page_id, html, url in pages:
            start = time.perf_counter()
            text = trafilatura.extract(html, url=url) or ""
            seconds.append(time.perf_counter() - start)
            texts.append({"id": page_id, "text": text})
        if first:
            with open(out_path, "w") as out:
                for entry in texts:
                    out.write(json.dumps(entry) + "\n")
            first = False
        sys.stdout.write(json.dumps({"seconds": seconds}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
