"""Records pages into a WARC file with pywb's recorder, as an archive's users capture the
web with it: pywb's `wayback` server runs on loopback in live recording mode on a new
collection, and each URL is fetched through it (`/c/record/id_/URL`), so that pywb fetches
it and writes its request and response records. Prints, as JSON, the WARC files written.

usage: python pywb_record.py ROOT URL...
"""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request


def main():
    root, urls = sys.argv[1], sys.argv[2:]
    archive = os.path.join(root, "collections", "c", "archive")
    os.makedirs(archive)
    os.makedirs(os.path.join(root, "collections", "c", "indexes"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    wayback = os.path.join(os.path.dirname(sys.executable), "wayback")
    # pywb's cookie rewriter would fetch the public suffix list from the internet; an empty
    # list of sources makes it use the copy it ships.
    env = dict(os.environ, TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS="")
    server = subprocess.Popen(
        [wayback, "--live", "--record", "-p", str(port), "-b", "127.0.0.1", "-d", root],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=5).read()
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise SystemExit("pywb did not start: " + server.stderr.read().decode())
                time.sleep(0.2)
        for url in urls:
            reply = urllib.request.urlopen(
                "http://127.0.0.1:%d/c/record/id_/%s" % (port, url), timeout=30
            )
            reply.read()
            if reply.status != 200:
                raise SystemExit("pywb answered %d for %s" % (reply.status, url))
    finally:
        server.terminate()
        server.wait()
    print(json.dumps(sorted(os.path.join(archive, n) for n in os.listdir(archive))))


if __name__ == "__main__":
    main()
