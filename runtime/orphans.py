"""Orphan files found without a JVM: a listing of the table location against every file any snapshot or
ref can reach, so ``maintain`` starts Spark's ``remove_orphan_files`` only when there is something to remove.

Reachable: the current metadata file and every one in the metadata log, every snapshot's manifest list,
every manifest it names and every data or delete file in them (entries of any status: a conservative
reading), and statistics files. Spark's procedure still does the deleting with its own checks; this only
decides whether it is due, and refuses when the candidates look implausible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from urllib.parse import urlparse

from pyarrow import fs as pafs
from pyiceberg.table import Table

from compiler.maintenance.health import OrphanFigures
from runtime.manifests import READS

MAX_SHARE = 0.5  # candidates over half the table's bytes look like a misread location, not orphans


@dataclass(frozen=True)
class OrphanFile:
    path: str
    size: int
    modified: datetime


@dataclass(frozen=True)
class OrphanScan:
    """Unreferenced files under the table location; ``old`` ones are past the guard and removable."""

    listed: int
    listed_bytes: int
    old: tuple[OrphanFile, ...] = ()
    young: int = 0  # unreferenced but newer than the guard: maybe a commit still in flight
    refused: str | None = None  # why removal must not run, when the candidates look implausible
    nested_tables: tuple[str, ...] = field(default=())

    @property
    def files(self) -> int:
        return len(self.old)

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.old)


def normalize(location: str) -> str:
    """A path as the filesystem listing spells it: ``file:///w/t/a.parquet`` -> ``/w/t/a.parquet``,
    ``s3://bucket/w/a`` -> ``bucket/w/a``."""
    parsed = urlparse(location)
    if parsed.scheme in ("", "file"):
        return parsed.path
    return f"{parsed.netloc}{parsed.path}"


def reachable_files(table: Table) -> set[str]:
    """Every file the table's metadata, snapshots and refs can reach (normalized paths)."""
    metadata = table.metadata
    found = {table.metadata_location, *(entry.metadata_file for entry in metadata.metadata_log)}
    read: set[str] = set()  # a manifest is listed by every later snapshot that keeps it: read it once
    for snapshot in metadata.snapshots:
        found.add(snapshot.manifest_list)
        for manifest in READS.manifests(table.io, snapshot):
            if manifest.manifest_path in read:
                continue
            read.add(manifest.manifest_path)
            found.add(manifest.manifest_path)
            for entry in READS.entries(table.io, manifest, discard_deleted=False):
                found.add(entry.data_file.file_path)
    for statistics in (*metadata.statistics, *metadata.partition_statistics):
        found.add(statistics.statistics_path)
    return {normalize(path) for path in found if path}


def list_files(location: str, properties: Mapping[str, str] | None = None) -> list[pafs.FileInfo]:
    """Every file under a location (none when it does not exist yet), listed through the filesystem pyiceberg's
    PyArrowFileIO builds from ``properties`` (the table's FileIO's: the catalog's S3 endpoint, keys, region),
    so a table on object storage is listed where pyiceberg reads it; S3 paths come back as ``bucket/key``
    whichever of ``s3``, ``s3a`` or ``s3n`` the location says (``normalize``)."""
    from pyiceberg.io.pyarrow import PyArrowFileIO

    scheme, netloc, base = PyArrowFileIO.parse_location(location)
    filesystem = PyArrowFileIO(dict(properties or {})).fs_by_scheme(scheme, netloc)
    try:
        return [info for info in filesystem.get_file_info(pafs.FileSelector(base, recursive=True))
                if info.type == pafs.FileType.File]
    except FileNotFoundError:
        return []


def stored_files(location: str, properties: Mapping[str, str] | None = None) -> dict[str, int]:
    """Every file under a location and its size: what the table costs in storage, orphans included."""
    return {info.path: int(info.size or 0) for info in list_files(location, properties)}


def scan_orphans(table: Table, older_than: datetime, other_locations: Sequence[str] = ()) -> OrphanScan:
    """Compare a listing of the table location with what its metadata reaches.

    ``other_locations``: locations of the catalog's other tables; one inside this table's location would
    make its files look orphaned here, so removal is refused.
    """
    root = normalize(table.location()).rstrip("/")
    nested = tuple(sorted(loc for loc in other_locations if normalize(loc).rstrip("/").startswith(root + "/")
                          or normalize(loc).rstrip("/") == root))
    listing = list_files(table.location(), table.io.properties)
    reachable = reachable_files(table)
    old, young = [], 0
    for info in listing:
        path = normalize(info.path) if "://" in info.path else info.path
        if path in reachable:
            continue
        modified = info.mtime if info.mtime is not None else datetime.fromtimestamp(0).astimezone()
        if modified.tzinfo is None:
            modified = modified.astimezone()
        if modified < older_than:
            old.append(OrphanFile(path, int(info.size or 0), modified))
        else:
            young += 1
    listed_bytes = sum(int(i.size or 0) for i in listing)
    scan = OrphanScan(len(listing), listed_bytes, tuple(sorted(old, key=lambda f: f.path)), young,
                      nested_tables=nested)
    return _plausible(scan)


def _plausible(scan: OrphanScan) -> OrphanScan:
    if scan.nested_tables:
        return replace(scan, refused=f"the location holds another table's files ({', '.join(scan.nested_tables)})")
    if scan.files and scan.listed_bytes and scan.bytes > MAX_SHARE * scan.listed_bytes:
        share = scan.bytes / scan.listed_bytes
        return replace(scan, refused=f"{scan.files} candidate file(s) are {share:.0%} of the bytes under the "
                                     f"table location (more than {MAX_SHARE:.0%}): check the location and the "
                                     "catalog before removing anything")
    return scan


def orphan_figures(table: Table, older_than: datetime) -> OrphanFigures:
    """The scan as maintenance decisions read it."""
    scan = scan_orphans(table, older_than)
    return OrphanFigures(files=scan.files, bytes=scan.bytes, young=scan.young, refused=scan.refused)
