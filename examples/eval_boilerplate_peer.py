"""Runs trafilatura on the boilerplate development set's pages for `eval_boilerplate`.

usage: python eval_boilerplate_peer.py DATASET OUT.jsonl

Writes one JSON line per page ({"url", "text"}) in the order of evaldata.json's keys, sorted,
and a last line {"total_seconds"}: the time spent inside trafilatura.extract only.
"""
import gzip
import json
import os
import sys
import time

import trafilatura


def main():
    dataset, out_path = sys.argv[1], sys.argv[2]
    with open(os.path.join(dataset, "evaldata.json")) as f:
        pages = json.load(f)
    total = 0.0
    with open(out_path, "w") as out:
        for url in sorted(pages):
            path = os.path.join(dataset, "html", pages[url]["file"] + ".gz")
            try:
                with gzip.open(path) as f:
                    html = f.read()
            except OSError:
                out.write(json.dumps({"url": url, "text": None}) + "\n")
                continue
            start = time.perf_counter()
            text = trafilatura.extract(html, url=url if "://" in url else None) or ""
            total += time.perf_counter() - start
            out.write(json.dumps({"url": url, "text": text}) + "\n")
        out.write(json.dumps({"total_seconds": total}) + "\n")


if __name__ == "__main__":
    main()
