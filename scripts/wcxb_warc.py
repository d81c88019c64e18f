"""Writes the pages of a dataset folder of `.html.gz` files (WCXB's dev split) as one WARC
file, a response record a page with the URL its metadata gives, gzip members as wget and
Heritrix write them: the input of the WARC rate figure (docs/benchmarks.md).

usage: python wcxb_warc.py ../shared/datasets/wcxb-dev OUT.warc.gz
"""
import gzip
import io
import json
import os
import sys

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter


def main():
    folder, out = sys.argv[1], sys.argv[2]
    files = json.load(open(os.path.join(folder, "metadata.json")))["files"]
    with open(out, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        for key in sorted(files):
            path = os.path.join(folder, "dev", "html", key + ".html.gz")
            body = gzip.open(path).read()
            headers = StatusAndHeaders(
                "200 OK",
                [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))],
                protocol="HTTP/1.1",
            )
            record = writer.create_warc_record(
                files[key]["url"], "response", payload=io.BytesIO(body), http_headers=headers
            )
            writer.write_record(record)


if __name__ == "__main__":
    main()
