#!/bin/sh
# Creates target/peers, a Python virtualenv holding the peers that the benchmarks measure
# side by side with crawldedup: trafilatura (extraction) and simhash (fingerprints, index).
# Usage: scripts/peers.sh   (then pass target/peers/bin/python to a benchmark's --peer)
# numpy stays below 2: simhash 2.1.2 overflows a uint8 under numpy 2 on long texts.
set -eu
cd "$(dirname "$0")/.."
if [ ! -x target/peers/bin/python ]; then
    python3 -m venv target/peers
fi
target/peers/bin/pip install --quiet --disable-pip-version-check \
    trafilatura==2.3.1 lxml_html_clean==0.4.6 simhash==2.1.2 "numpy<2"
target/peers/bin/python -c "import trafilatura, simhash; print('peers ready:', trafilatura.__version__)"
