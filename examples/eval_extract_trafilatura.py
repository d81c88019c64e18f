"""Runs trafilatura on WCXB dev pages for `eval_extract` (which scores the output).

usage: python eval_extract_trafilatura.py DATASET OUT.jsonl ID,ID,...

Writes one JSON line per page ({"id", "text"}) and a last line {"total_seconds"} holding the
time spent inside trafilatura.extract only (reading and gunzipping are not timed).
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
    total = 0.0
    with open(out_path, "w") as out:
        for page_id in ids:
            with gzip.open(os.path.join(dataset, "dev", "html", page_id + ".html.gz")) as f:
                html = f.read()
            url = files.get(page_id, {}).get("url")
            start = time.perf_counter()
            text = trafilatura.extract(html, url=url) or ""
            total += time.perf_counter() - start
            out.write(json.dumps({"id": page_id, "text": text}) + "\n")
        out.write(json.dumps({"total_seconds": total}) + "\n")


if __name__ == "__main__":
    main()
