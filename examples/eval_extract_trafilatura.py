"""Runs trafilatura on WCXB dev pages for `eval_extract` (which scores the output and has
the two tools take turns).

usage: python eval_extract_trafilatura.py DATASET OUT.jsonl ID,ID,...

Reads and gunzips the pages once, then, for each line `run FIRST END` it reads on stdin
until stdin closes, runs the pages FIRST to END (indices into the ids, END excluded). The
text of each page's first run goes to OUT.jsonl, one JSON line per page ({"id", "text"}).
After each run it prints one JSON line on stdout, {"seconds": [...]}: the time each of those
pages spent inside trafilatura.extract, in order (reading and gunzipping are not timed).
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
    with open(out_path, "w") as out:
        written = set()
        for line in sys.stdin:
            words = line.split()
            if len(words) != 3 or words[0] != "run":
                sys.exit(f"unknown command {line.strip()!r}")
            first, end = int(words[1]), int(words[2])
            seconds = []
            for index in range(first, end):
                page_id, html, url = pages[index]
                start = time.perf_counter()
                text = trafilatura.extract(html, url=url) or ""
                seconds.append(time.perf_counter() - start)
                if index not in written:
                    out.write(json.dumps({"id": page_id, "text": text}) + "\n")
                    written.add(index)
            out.flush()
            sys.stdout.write(json.dumps({"seconds": seconds}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
