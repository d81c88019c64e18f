"""crawldedup: keeps web crawls free of repeats.

The page stage of the Rust crate ``crawldedup``, in process:

* :class:`Dedup` checks URLs (canonicalized, then against a Bloom filter sized for the
  expected count and false-positive rate) and pages (boilerplate stripped, main text
  simhashed, near-duplicates found in a persistent index and confirmed on a MinHash
  sketch), and keeps both on disk in its state directory;
* :func:`extract`, :func:`simhash` and :func:`canonicalize` are the stage's parts alone;
* :mod:`crawldedup.scrapy` has a dupefilter, a downloader middleware and an item pipeline
  for Scrapy.

Every call releases the GIL and is safe from many threads. Errors are
:class:`crawldedup.Error` (one line naming the thing and the problem), or ``TypeError`` and
``ValueError`` for arguments of the wrong kind.

    >>> import crawldedup
    >>> with crawldedup.Dedup() as dedup:
    ...     dedup.check_url("https://example.com/a?utm_source=x").verdict
    ...     dedup.check_url("https://EXAMPLE.com/a").verdict
    'new'
    'seen'
"""

# The extension module's names (its `__all__`, which the type stub repeats and CI checks).
from ._crawldedup import *  # noqa: F403
from ._crawldedup import __all__  # noqa: F401
