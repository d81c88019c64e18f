"""Reads crawldedup's WARC files with warcio and prints what it found, as JSON.

usage: python warcio_check.py OUT/warc

Every record must parse; a response's payload digest, when it declares one, must match its payload;
a revisit that claims an identical payload (the WARC 1.1 identical-payload-digest profile)
must refer to a response of the same payload digest. `served` maps every URL to the
digest of the bytes a replay tool would serve for it: a response's own payload, or for
an identical-payload revisit the payload of the response it refers to.
"""
import base64
import hashlib
import json
import os
import sys

from warcio.archiveiterator import ArchiveIterator

IDENTICAL = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


def main():
    folder = sys.argv[1]
    counts = {}
    stored = []
    duplicates = []
    served = {}
    revisits = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith((".warc.gz", ".warc")):
            continue  # the CDXJ index beside each file
        with open(os.path.join(folder, name), "rb") as f:
            for record in ArchiveIterator(f):
                kind = record.rec_type
                counts[kind] = counts.get(kind, 0) + 1
                headers = record.rec_headers
                url = headers.get_header("WARC-Target-URI")
                if kind == "response":
                    payload = record.content_stream().read()
                    digest = "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode()
                    declared = headers.get_header("WARC-Payload-Digest")
                    if declared is not None and digest != declared:
                        raise SystemExit("payload digest mismatch: " + url)
                    served[url] = digest
                    if headers.get_header("WARC-Crawldedup-Verdict"):
                        duplicates.append(url)
                    else:
                        stored.append(url)
                if kind == "revisit":
                    original = headers.get_header("WARC-Refers-To-Target-URI")
                    if not original:
                        raise SystemExit("revisit without WARC-Refers-To-Target-URI")
                    revisits.append((url, original, headers))
    for url, original, headers in revisits:
        if headers.get_header("WARC-Profile") != IDENTICAL:
            continue
        if served.get(original) != headers.get_header("WARC-Payload-Digest"):
            raise SystemExit(
                "identical-payload revisit %s refers to %s, whose payload differs" % (url, original)
            )
        served[url] = served[original]
    print(json.dumps({
        "counts": counts,
        "responses": sorted(stored),
        "duplicate_responses": sorted(duplicates),
        "served": served,
    }))


if __name__ == "__main__":
    main()
