"""Types of the extension module (built from python/src/lib.rs)."""

import os
import pathlib
from types import TracebackType
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Type, Union, final

__all__ = [
    "ClosedError",
    "ConfigError",
    "Dedup",
    "Error",
    "Extracted",
    "PageVerdict",
    "StateError",
    "UrlVerdict",
    "canonicalize",
    "extract",
    "simhash",
    "__version__",
]

__version__: str

class Error(Exception):
    """Base class of every error crawldedup raises: one line naming the thing and the problem."""

class ConfigError(Error):
    """A setting, a ``settings`` key or the configuration file is wrong."""

class StateError(Error):
    """The state directory cannot be opened (damaged, locked, of another format) or written."""

class ClosedError(Error):
    """The Dedup was closed."""

@final
class UrlVerdict:
    verdict: Literal["new", "seen", "invalid"]
    url: str
    canonical: Optional[str]
    error: Optional[str]
    @property
    def is_new(self) -> bool: ...

@final
class PageVerdict:
    verdict: Literal["unique", "exact_duplicate", "near_duplicate", "no_text"]
    url: str
    of: Optional[str]
    distance: Optional[int]
    similarity: Optional[float]
    containment: Optional[float]
    id: Optional[int]
    simhash: Optional[str]
    digest: Optional[str]
    nearest_similarity: Optional[float]
    title: Optional[str]
    text: Optional[str]
    @property
    def is_duplicate(self) -> bool: ...
    @property
    def is_unique(self) -> bool: ...
    def to_dict(self) -> Dict[str, Any]: ...

@final
class Extracted:
    title: Optional[str]
    text: str
    language: Optional[str]
    description: Optional[str]
    canonical: Optional[str]
    links: List[str]

_Body = Union[bytes, bytearray, memoryview, str]
_SettingValue = Union[bool, int, float, str, Sequence[Union[bool, int, float, str]]]

@final
class Dedup:
    """The page stage on a state directory; see the package documentation."""

    def __new__(
        cls,
        state_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        *,
        config: Optional[Union[str, "os.PathLike[str]"]] = None,
        settings: Optional[Mapping[str, _SettingValue]] = None,
        durability: Literal["answered", "checkpoint"] = "answered",
    ) -> "Dedup": ...
    @property
    def state_dir(self) -> pathlib.Path: ...
    @property
    def closed(self) -> bool: ...
    def check_url(self, url: str, *, durable: Optional[bool] = None) -> UrlVerdict: ...
    def check_urls(
        self, urls: Sequence[str], *, durable: Optional[bool] = None
    ) -> List[UrlVerdict]: ...
    def check_page(
        self,
        url: str,
        *,
        body: Optional[_Body] = None,
        content_type: Optional[str] = None,
        text: Optional[str] = None,
        include_text: bool = False,
        durable: Optional[bool] = None,
    ) -> PageVerdict: ...
    def extract(
        self, html: _Body, url: Optional[str] = None, content_type: Optional[str] = None
    ) -> Extracted: ...
    def simhash(self, text: str) -> int: ...
    def checkpoint(self) -> None: ...
    def stats(self) -> Dict[str, Any]: ...
    def close(self) -> Optional[Dict[str, Any]]: ...
    def __enter__(self) -> "Dedup": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

def extract(html: _Body, url: Optional[str] = None, content_type: Optional[str] = None) -> Extracted: ...
def simhash(text: str) -> int: ...
def canonicalize(url: str) -> str: ...
