"""Writes a WARC file with warcio, as other tools' archives are written, for crawldedup's
reader to read: pages fetched from a server with warcio's capture_http (request and
response records, gzip members), then for each page a revisit record as warcio writes
them (identical-payload-digest profile, WARC-Refers-To-Target-URI and -Date), one of them
URL-agnostic (another URI than its original's). Prints the URIs fetched, as JSON.

usage: python warcio_write.py OUT.warc.gz URL...
"""
import json
import sys
import urllib.request

from warcio.capture_http import capture_http  # must come before the HTTP client is used
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter


def main():
    path, urls = sys.argv[1], sys.argv[2:]
    with capture_http(path):
        for url in urls:
            urllib.request.urlopen(url).read()
    # The responses' payload digests and dates, for the revisits.
    responses = []
    with open(path, "rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_type == "response":
                responses.append(
                    (
                        record.rec_headers.get_header("WARC-Target-URI"),
                        record.rec_headers.get_header("WARC-Payload-Digest"),
                        record.rec_headers.get_header("WARC-Date"),
                    )
                )
    with open(path, "ab") as f:
        writer = WARCWriter(f, gzip=True)
        for i, (uri, digest, date) in enumerate(responses):
            target = uri if i else uri.replace("127.0.0.1", "mirror.example")
            writer.write_record(
                writer.create_revisit_record(target, digest, uri, date)
            )
    print(json.dumps([uri for uri, _, _ in responses]))


if __name__ == "__main__":
    main()
