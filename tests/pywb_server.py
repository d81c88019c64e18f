"""pywb's `wayback` server on loopback, for tests/pywb_replay.py and tests/pywb_record.py:
started on a free port over a root folder of collections, ready when this returns."""
import os
import random
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request


def free_port():
    """A free port below the kernel's ephemeral range (32768 on), so that no server a
    concurrent test binds to port 0 can take it between this check and wayback's bind."""
    for _ in range(200):
        port = random.randint(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise SystemExit("no free port for pywb")


def start(root, *options):
    """Starts `wayback OPTIONS` over `root`; returns the process and its port."""
    port = free_port()
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
            # pywb's home page names it: not another test's server on the same port.
            page = urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=5).read()
            if b"pywb" in page.lower() and server.poll() is None:
                return server, port
            raise OSError("not pywb")
        except OSError:
            if time.time() > deadline or server.poll() is not None:
                server.kill()
                raise SystemExit("pywb did not start: " + server.stderr.read().decode())
            time.sleep(0.2)


def stop(server):
    server.terminate()
    server.wait()
