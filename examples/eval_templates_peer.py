"""trafilatura + simhash deciding the pages of examples/eval_templates.rs, in order.

usage: eval_templates_peer.py PAGES.jsonl   (lines {"url", "file"})
Prints one JSON line per page: {"of": URL of the stored page it repeats, or null, "text":
the text trafilatura extracted, which the evaluation scores}.
A page is a duplicate when its main text's 64-bit simhash is within 3 bits of a stored one.
"""
import json
import sys

import trafilatura
from simhash import Simhash, SimhashIndex


def main():
    index = SimhashIndex([], k=3)
    for line in open(sys.argv[1]):
        page = json.loads(line)
        with open(page["file"], encoding="utf-8") as f:
            html = f.read()
        text = trafilatura.extract(html, url=page["url"]) or ""
        if not text.strip():
            print(json.dumps({"of": None, "text": text}))
            continue
        fingerprint = Simhash(text)
        near = index.get_near_dups(fingerprint)
        if near:
            print(json.dumps({"of": sorted(near)[0], "text": text}))
        else:
            index.add(page["url"], fingerprint)
            print(json.dumps({"of": None, "text": text}))


if __name__ == "__main__":
    main()
