"""The Python `simhash` package, measured for crawldedup's benchmarks.

usage:
  simhash_peer.py fingerprint FILE.jsonl     texts, one JSON string per line -> MB/s
  simhash_peer.py index N QUERIES SEED       SimhashIndex over N random fingerprints

Prints one JSON object. Only the work being measured is timed.
"""
import json
import random
import sys
import time

from simhash import Simhash, SimhashIndex


def fingerprint(path):
    with open(path) as f:
        texts = [json.loads(line) for line in f]
    size = sum(len(t.encode()) for t in texts)
    start = time.perf_counter()
    for t in texts:
        Simhash(t)
    seconds = time.perf_counter() - start
    print(json.dumps({"bytes": size, "seconds": seconds, "mb_per_s": size / seconds / 1e6}))


def index(n, queries, seed):
    rng = random.Random(seed)
    values = [rng.getrandbits(64) for _ in range(n)]
    objs = [(str(i), Simhash(v)) for i, v in enumerate(values)]
    start = time.perf_counter()
    idx = SimhashIndex(objs, k=3)
    build = time.perf_counter() - start
    times = []
    for q in range(queries):
        if q % 2 == 0:
            v = values[rng.randrange(n)]
            for _ in range(rng.randrange(4)):
                v ^= 1 << rng.randrange(64)
        else:
            v = rng.getrandbits(64)
        h = Simhash(v)
        t = time.perf_counter()
        idx.get_near_dups(h)
        times.append(time.perf_counter() - t)
    times.sort()
    print(json.dumps({
        "inserts_per_s": n / build,
        "median_us": times[len(times) // 2] * 1e6,
        "p99_us": times[int(len(times) * 0.99)] * 1e6,
    }))


if __name__ == "__main__":
    if sys.argv[1] == "fingerprint":
        fingerprint(sys.argv[2])
    else:
        index(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
