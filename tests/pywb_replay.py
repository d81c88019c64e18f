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
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request


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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    wayback = os.path.join(os.path.dirname(sys.executable), "wayback")
    # pywb's cookie rewriter would fetch the public suffix list from the internet; an empty
    # list of sources makes it use the copy it ships.
    env = dict(os.environ, TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS="")
    server = subprocess.Popen(
        [wayback, "-p", str(port), "-b", "127.0.0.1", "-d", root],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    opener = urllib.request.build_opener(NoRedirect)
    base = "http://127.0.0.1:%d/c/id_/" % port
    try:
        deadline = time.time() + 60
        while True:
            try:
                opener.open("http://127.0.0.1:%d/" % port, timeout=5).read()
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise SystemExit("pywb did not start: " + server.stderr.read().decode())
                time.sleep(0.2)
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
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
