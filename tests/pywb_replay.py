"""Replays URLs from WARC files and their CDXJ indexes with pywb, as an archive's users
would: the files go into a pywb collection (the WARC files into its archive folder, the
CDXJ files, unchanged, into its indexes folder, so pywb uses the index that was written
and indexes nothing itself), pywb's `wayback` server runs on loopback, and each URL is
asked for in its `id_` mode (the archived bytes, not rewritten). Prints, as JSON, each
URL's HTTP status and the base32 SHA-1 of the body it got.

usage: python pywb_replay.py ROOT WARC_DIR < urls.json
"""
import base64
import hashlib
import json
import os
import shutil
import sys
import urllib.error
import urllib.request

import pywb_server


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def main():
    root, warcs = sys.argv[1], sys.argv[2]
    urls = json.load(sys.stdin)
    archive = os.path.join(root, "collections", "c", "archive")
    indexes = os.path.join(root, "collections", "c", "indexes")
    os.makedirs(archive)
    os.makedirs(indexes)
    for name in sorted(os.listdir(warcs)):
        if name.endswith((".warc.gz", ".warc")):
            shutil.copy(os.path.join(warcs, name), archive)
        elif name.endswith(".cdxj"):
            shutil.copy(os.path.join(warcs, name), indexes)
    server, port = pywb_server.start(root)
    opener = urllib.request.build_opener(NoRedirect)
    base = "http://127.0.0.1:%d/c/id_/" % port
    try:
        replayed = {}
        for url in urls:
            try:
                reply = opener.open(base + url, timeout=30)
                status, body = reply.status, reply.read()
            except urllib.error.HTTPError as e:
                status, body = e.code, e.read()
            digest = base64.b32encode(hashlib.sha1(body).digest()).decode()
            replayed[url] = {"status": status, "digest": "sha1:" + digest}
        print(json.dumps(replayed))
    finally:
        pywb_server.stop(server)


if __name__ == "__main__":
    main()
