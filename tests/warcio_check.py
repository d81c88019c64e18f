"""Reads crawldedup's WARC files with warcio and prints what it found, as JSON.

usage: python warcio_check.py OUT/warc
Every record must parse; a response must carry a payload digest that matches its payload.
"""
import base64
import hashlib
import json
import os
import sys

from warcio.archiveiterator import ArchiveIterator


def main():
    folder = sys.argv[1]
    counts = {}
    responses = []
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            for record in ArchiveIterator(f):
                kind = record.rec_type
                counts[kind] = counts.get(kind, 0) + 1
                if kind == "response":
                    payload = record.content_stream().read()
                    digest = "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode()
                    if digest != record.rec_headers.get_header("WARC-Payload-Digest"):
                        raise SystemExit("payload digest mismatch: " + record.rec_headers.get_header("WARC-Target-URI"))
                    responses.append(record.rec_headers.get_header("WARC-Target-URI"))
                if kind == "revisit":
                    if not record.rec_headers.get_header("WARC-Refers-To-Target-URI"):
                        raise SystemExit("revisit without WARC-Refers-To-Target-URI")
    print(json.dumps({"counts": counts, "responses": sorted(responses)}))


if __name__ == "__main__":
    main()
