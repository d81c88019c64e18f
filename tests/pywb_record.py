"""Records pages into a WARC file with pywb's recorder, as an archive's users capture the
web with it: pywb's `wayback` server runs on loopback in live recording mode on a new
collection, and each URL is fetched through it (`/c/record/id_/URL`), so that pywb fetches
it and writes its request and response records. Prints, as JSON, the WARC files written.

usage: python pywb_record.py ROOT URL...
"""
import json
import os
import sys
import urllib.request

import pywb_server


def main():
    root, urls = sys.argv[1], sys.argv[2:]
    archive = os.path.join(root, "collections", "c", "archive")
    os.makedirs(archive)
    os.makedirs(os.path.join(root, "collections", "c", "indexes"))
    server, port = pywb_server.start(root, "--live", "--record")
    try:
        for url in urls:
            reply = urllib.request.urlopen(
                "http://127.0.0.1:%d/c/record/id_/%s" % (port, url), timeout=30
            )
            reply.read()
            if reply.status != 200:
                raise SystemExit("pywb answered %d for %s" % (reply.status, url))
    finally:
        pywb_server.stop(server)
    print(json.dumps(sorted(os.path.join(archive, n) for n in os.listdir(archive))))


if __name__ == "__main__":
    main()
