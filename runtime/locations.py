"""Table locations and file paths as Iceberg records them, turned into what each reader wants: the one place.

What Iceberg writes: a location or file path is text, never a URI. Spark's Iceberg 1.10 (Hadoop's ``Path``)
and pyiceberg both write the table location as the catalog gives it (``warehouse/<namespace>/<table>``) and
every file path as that location plus ``/data/...`` or ``/metadata/...``, with the name's characters raw:
``file:/w/n s/t#x/data/a.parquet`` (Spark), ``file:///w/n s/t#x/...`` (pyiceberg). A ``%20`` in a name stays
``%20`` in the path and on disk (the file system holds a folder literally named ``n%20s``); a partition value's
folder is percent-encoded by Iceberg itself (``k=a%27b``) and that too is the literal folder name. On S3 the
object key is the raw path after the bucket (Hadoop's S3A decodes the ``Path``'s own quoting back to it).

So nothing here decodes or encodes: the scheme and authority are split off textually and the rest is the path.
``urllib.parse.urlparse`` reads such text wrongly (``#`` starts a fragment, ``?`` a query); pyiceberg's
``PyArrowFileIO.parse_location`` uses it, which is why the catalogs tablepolicy opens give their tables
``IcebergPathFileIO`` (``PYICEBERG_IO``): the same FileIO with this split.

- pyarrow's filesystems: ``filesystem(location)`` and ``fs_path(location)`` (``/w/n s/t#x/a`` on local disk,
  ``bucket/key`` on S3, as pyarrow's ``S3FileSystem`` names objects);
- pyiceberg: ``IcebergPathFileIO`` (``new_input``/``new_output``/``delete`` take Iceberg's text as is);
- Spark: ``spark_path`` is the text unchanged (Hadoop's ``Path(String)`` quotes what a URI needs itself);
- a URI for a browser or a tool that parses one: ``uri`` (percent-encoded).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import quote

from pyarrow import fs as pafs
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.typedef import EMPTY_DICT, Properties

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]+):")  # two letters at least: ``C:`` is a drive, not a scheme
EQUAL_SCHEMES = {"s3a": "s3", "s3n": "s3"}  # Iceberg's default equal_schemes: one store, three spellings
PATH_ONLY = ("hdfs", "viewfs")  # pyarrow's HadoopFileSystem is per cluster: its paths carry no authority
PYICEBERG_IO = "tablepolicy.runtime.locations.IcebergPathFileIO"  # py-io-impl of every catalog tablepolicy opens


@dataclass(frozen=True)
class Location:
    """A location split as Iceberg means it: ``scheme`` lower-cased ("" for a bare path), ``authority`` (the
    bucket or host, "" for ``file:``), ``path`` raw, with its leading ``/`` when it has one."""

    scheme: str
    authority: str
    path: str


def split(location: str) -> Location:
    """``s3a://b/n s/t#x`` -> ``Location("s3a", "b", "/n s/t#x")``; ``file:/w/a?b`` -> ``("file", "", "/w/a?b")``.

    >>> split("file:///w/t;x")
    Location(scheme='file', authority='', path='/w/t;x')
    >>> split("/w/t%20x")
    Location(scheme='', authority='', path='/w/t%20x')
    """
    found = _SCHEME.match(location)
    if found is None:
        return Location("", "", location)
    rest = location[found.end():]
    if rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        return Location(found[1].lower(), authority, slash + path)
    return Location(found[1].lower(), "", rest)


def store(location: str) -> str:
    """The store a location names: its scheme with the spellings of one store made one (``s3a``/``s3n`` ->
    ``s3``; none -> ``file``)."""
    scheme = split(location).scheme or "file"
    return EQUAL_SCHEMES.get(scheme, scheme)


def is_local(location: str) -> bool:
    return split(location).scheme in ("", "file")


@functools.lru_cache(maxsize=1 << 18)
def fs_path(location: str) -> str:
    """The path pyarrow's filesystem for the location takes (and a listing returns): the raw path on local disk
    (``file:///w/t`` -> ``/w/t``), ``bucket/key`` on object storage (``s3://b/w/t`` -> ``b/w/t``). A path
    without a scheme is taken as it is, so a listing's ``bucket/key`` maps to itself: ``fs_path`` of its own
    result is that result. Remembered per location: an erasure's surveys spell every file of every manifest
    this way several times (85,000 calls on a 5,000-file table, a tenth of its pruned run)."""
    parts = split(location)
    if parts.scheme in ("", "file"):
        return parts.path
    if parts.scheme in PATH_ONLY:
        return parts.path
    return f"{parts.authority}{parts.path}"


def listed_location(location: str, path: str) -> str:
    """A path a listing of ``location`` returned, spelled with the location's scheme and bucket again."""
    parts = split(location)
    if parts.scheme in ("", "file"):
        return path
    if parts.scheme in PATH_ONLY:
        return f"{parts.scheme}://{parts.authority}{path}"
    return f"{parts.scheme}://{path}"


def spark_path(location: str) -> str:
    """What Spark (Hadoop's ``Path``, Iceberg's HadoopFileIO and S3A) reads a location by: the text Iceberg
    recorded, unchanged. ``Path(String)`` takes the path raw and quotes it into a URI itself; percent-encoding
    it here would name another file (``%2520``)."""
    return location


def uri(location: str) -> str:
    """A URI naming the location, percent-encoded, for tools that parse URIs (pyarrow's ``from_uri``, a link):
    ``file:///w/n s/t#x`` -> ``file:///w/n%20s/t%23x``."""
    parts = split(location)
    path = quote(fs_path(location) if parts.scheme in ("", "file") else parts.path, safe="/")
    return f"{parts.scheme or 'file'}://{parts.authority}{path}"


def filesystem(location: str, properties: Mapping[str, str] | None = None,
               cache: dict[tuple[str, str], pafs.FileSystem] | None = None) -> pafs.FileSystem:
    """The pyarrow filesystem pyiceberg reads ``location`` with, built from ``properties`` (the table's FileIO's:
    the catalog's S3 endpoint, keys and region; pyarrow's ``from_uri`` would ask AWS instead); ``cache``: one per
    scheme and bucket of a run."""
    parts = split(location)
    key = (parts.scheme or "file", parts.authority)
    if cache is not None and key in cache:
        return cache[key]
    found = PyArrowFileIO(dict(properties or {})).fs_by_scheme(*key)
    if cache is not None:
        cache[key] = found
    return found


class IcebergPathFileIO(PyArrowFileIO):
    """pyiceberg's PyArrowFileIO reading Iceberg's paths as text (``split``), not as URIs: a table whose name
    holds ``#`` or ``?`` is read, written and deleted where Spark put its files."""

    @staticmethod
    def parse_location(location: str, properties: Properties = EMPTY_DICT) -> tuple[str, str, str]:
        parts = split(location)
        if parts.scheme:
            return parts.scheme, parts.authority, fs_path(location)
        return (properties.get("DEFAULT_SCHEME", "file"), properties.get("DEFAULT_NETLOC", ""),
                os.path.abspath(location))
