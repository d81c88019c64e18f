"""pywb's `wayback` server on loopback, for tests/pywb_replay.py and tests/pywb_record.py:
started on a free port over a root folder of collections, ready when this returns."""
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request


def start(root, *options):
    """Starts `wayback OPTIONS` over `root`; returns the process and its port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    wayback = os.path.join(os.path.dirname(sys.executable), "wayback")
    # pywb's cookie rewriter would fetch the public suffix list from the internet; an empty
    # list of sources makes it use the copy it ships.
    env = dict(os.environ, TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS="")
    server = subprocess.Popen(
        [wayback, *options, "-p", str(port), "-b", "127.0.0.1", "-d", root],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=5).read()
            return server, port
        except urllib.error.HTTPError:
            return server, port
        except OSError:
            if time.time() > deadline or server.poll() is not None:
                server.kill()
                raise SystemExit("pywb did not start: " + server.stderr.read().decode())
            time.sleep(0.2)


def stop(server):
    server.terminate()
    server.wait()
