"""runtime/locations.py: a location or file path as Iceberg records it (text, the name's characters raw) turned
into what pyarrow's filesystems, pyiceberg's FileIO and Spark take. The spellings are those Spark's Iceberg 1.10
and pyiceberg wrote for tables named with these characters (tests/integration/test_hostile_names.py reads them back)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyiceberg.io.pyarrow import PyArrowFileIO

from tablepolicy.runtime.locations import (
    IcebergPathFileIO,
    Location,
    fs_path,
    listed_location,
    spark_path,
    split,
    store,
    uri,
)

HOSTILE = ["'", "`", '"', " ", ";", "--", "%20", "#", "?", "\\", "é", "🦆"]

# location as recorded -> (split, pyarrow path, store, percent-encoded URI)
CASES = [
    ("file:///w/n s/t#x/data/a.parquet", Location("file", "", "/w/n s/t#x/data/a.parquet"),
     "/w/n s/t#x/data/a.parquet", "file", "file:///w/n%20s/t%23x/data/a.parquet"),
    ("file:/w/n?s/t;x", Location("file", "", "/w/n?s/t;x"), "/w/n?s/t;x", "file", "file:///w/n%3Fs/t%3Bx"),  # Spark's
    ("/w/n%20s/t", Location("", "", "/w/n%20s/t"), "/w/n%20s/t", "file", "file:///w/n%2520s/t"),  # never decoded
    ("file:///w/k=a%27b/f.parquet", Location("file", "", "/w/k=a%27b/f.parquet"), "/w/k=a%27b/f.parquet", "file",
     "file:///w/k%3Da%2527b/f.parquet"),  # Iceberg's own partition folder: the % is in the folder's name
    ("s3://b/n's/t`x/data/f.parquet", Location("s3", "b", "/n's/t`x/data/f.parquet"), "b/n's/t`x/data/f.parquet",
     "s3", "s3://b/n%27s/t%60x/data/f.parquet"),
    ("s3a://b/n#s/t?x", Location("s3a", "b", "/n#s/t?x"), "b/n#s/t?x", "s3", "s3a://b/n%23s/t%3Fx"),
    ("s3n://b/n\\s/t\"x", Location("s3n", "b", "/n\\s/t\"x"), "b/n\\s/t\"x", "s3", "s3n://b/n%5Cs/t%22x"),
    ("S3://b/é/🦆", Location("s3", "b", "/é/🦆"), "b/é/🦆", "s3", "s3://b/%C3%A9/%F0%9F%A6%86"),
    ("hdfs://nn:8020/w/t--x", Location("hdfs", "nn:8020", "/w/t--x"), "/w/t--x", "hdfs", "hdfs://nn:8020/w/t--x"),
    ("file:///w/a://b", Location("file", "", "/w/a://b"), "/w/a://b", "file", "file:///w/a%3A//b"),
]


@pytest.mark.parametrize(("location", "parts", "path", "kind", "encoded"), CASES, ids=[c[0] for c in CASES])
def test_a_location_maps_to_each_readers_form(location: str, parts: Location, path: str, kind: str,
                                              encoded: str) -> None:
    assert split(location) == parts
    assert fs_path(location) == path
    assert store(location) == kind
    assert uri(location) == encoded
    assert spark_path(location) == location  # Hadoop's Path(String) takes Iceberg's text as it is
    scheme = parts.scheme or "file"
    assert IcebergPathFileIO.parse_location(location) == (scheme, parts.authority, path)


@pytest.mark.parametrize("location", [c[0] for c in CASES])
def test_a_listings_path_maps_to_itself(location: str) -> None:
    """Listings return ``bucket/key`` (S3) or ``/path``: mapped again they stay what they are, never a local path."""
    assert fs_path(fs_path(location)) == fs_path(location)


def test_pyiceberg_reads_a_relative_bare_path_from_the_working_folder() -> None:
    assert IcebergPathFileIO.parse_location("wh/t#x") == ("file", "", str(Path.cwd() / "wh/t#x"))


def test_a_listing_is_spelled_with_the_locations_scheme_again() -> None:
    assert listed_location("s3a://b/t#x", "b/t#x/data/f") == "s3a://b/t#x/data/f"
    assert listed_location("file:/w/t?x", "/w/t?x/data/f") == "/w/t?x/data/f"


def test_pyicebergs_own_parsing_reads_these_names_wrongly() -> None:
    """Why IcebergPathFileIO exists: urlparse takes ``#`` for a fragment and ``?`` for a query (if pyiceberg
    stops doing so, the subclass can go)."""
    assert PyArrowFileIO.parse_location("file:///w/n#s/t")[2] == "/w/n"
    assert PyArrowFileIO.parse_location("file:///w/n?s/t")[2] == "/w/n"
    assert PyArrowFileIO.parse_location("s3://b/n#s/t")[2] == "b/n"


@pytest.mark.parametrize("character", HOSTILE)
def test_a_file_is_written_read_and_deleted_at_its_raw_path(tmp_path: Path, character: str) -> None:
    folder = tmp_path / f"n{character}s" / f"t{character}x" / "data"
    location = f"file://{folder}/f{character}.parquet"
    io = IcebergPathFileIO()
    with io.new_output(location).create() as stream:
        stream.write(b"bytes")
    on_disk = folder / f"f{character}.parquet"
    assert on_disk.read_bytes() == b"bytes"  # the name's characters raw on disk, as Spark writes them
    with io.new_input(location).open() as stream:
        assert stream.read() == b"bytes"
    io.delete(location)
    assert not on_disk.exists()
