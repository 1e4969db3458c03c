"""Orphan files found without a JVM: a listing of the table location against every file any snapshot or
ref can reach, so ``maintain`` starts Spark's ``remove_orphan_files`` only when there is something to remove.

Reachable, as Iceberg 1.10's ``DeleteOrphanFilesSparkAction`` reckons it: the current metadata file and every
one in its metadata log, the version hint of a Hadoop table, every snapshot's manifest list (snapshots that
only a tag or branch keeps included), every manifest it names and every data or delete file in them (entries
of any status: a conservative reading), and statistics and partition statistics files.

Not candidates either, as in Iceberg: hidden paths, a name under the table location starting with ``_`` or
``.`` (``_SUCCESS``, ``.crc`` checksums, ``_temporary/``), unless it starts with ``<field>=`` for a partition
field so named (``_year=2024``): Spark's listing skips them, so counting them would start Spark for nothing.

Schemes naming one store are one (Iceberg's ``equal_schemes``: ``s3``, ``s3a``, ``s3n``); a listed file that
the metadata names under another bucket, scheme or prefix refuses removal, as ``prefix_mismatch_mode`` ERROR
does in Spark. The scan decides whether removal is due and refuses when the candidates look implausible;
``remove_orphans`` deletes what a scan right before finds, through the same filesystem (no JVM), as
Spark's ``remove_orphan_files`` would: the files older than the guard that nothing reaches.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from pyarrow import fs as pafs
from pyiceberg.table import Table

from tablepolicy.compiler.maintenance.health import OrphanFigures

from .locations import filesystem, fs_path, listed_location, split, store
from .manifests import READS

MAX_SHARE = 0.5  # candidates over half the table's bytes look like a misread location, not orphans
HIDDEN = ("_", ".")  # Iceberg's HiddenPathFilter: names engines keep for themselves
VERSION_HINT = "metadata/version-hint.text"  # a Hadoop table's pointer, reachable for Spark's action


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
    hidden: int = 0  # unreferenced but hidden (``_SUCCESS``, ``.crc``...): never removed, so never candidates
    mismatch: str | None = None  # a listed file the metadata names under another scheme, bucket or prefix

    @property
    def files(self) -> int:
        return len(self.old)

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.old)


def normalize(location: str) -> str:
    """A path as the filesystem listing spells it: ``file:///w/t/a.parquet`` -> ``/w/t/a.parquet``,
    ``s3://bucket/w/a`` -> ``bucket/w/a`` (runtime/locations.py: the name's characters raw, never decoded)."""
    return fs_path(location)


def hidden_partition_prefixes(table: Table) -> tuple[str, ...]:
    """``<name>=`` for every partition field of any spec whose name looks hidden: such directories are
    partitions, not hidden paths (Iceberg's PartitionAwareHiddenPathFilter)."""
    names = {f.name for spec in table.metadata.partition_specs for f in spec.fields if f.name.startswith(HIDDEN)}
    return tuple(sorted(f"{name}=" for name in names))


def is_hidden(relative: str, partition_prefixes: tuple[str, ...] = ()) -> bool:
    """Whether a path relative to the table location is hidden from Iceberg's orphan listing: some name on
    it starts with ``_`` or ``.`` and is not a partition directory of a field so named."""
    return any(part.startswith(HIDDEN) and not part.startswith(partition_prefixes)
               for part in relative.split("/") if part)


def references(table: Table) -> set[str]:
    """Every file the table's metadata, snapshots and refs can reach, spelled as the metadata spells them."""
    metadata = table.metadata
    found = {table.metadata_location, *(entry.metadata_file for entry in metadata.metadata_log),
             f"{table.location().rstrip('/')}/{VERSION_HINT}"}
    read: set[str] = set()  # a manifest is listed by every later snapshot that keeps it: read it once
    for snapshot in metadata.snapshots:  # every snapshot kept: the main history's and those refs hold
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
    return {path for path in found if path}


def reachable_files(table: Table) -> set[str]:
    """Every file the table's metadata, snapshots and refs can reach (normalized paths)."""
    return {normalize(path) for path in references(table)}


def list_files(location: str, properties: Mapping[str, str] | None = None) -> list[pafs.FileInfo]:
    """Every file under a location (none when it does not exist yet), listed through the filesystem pyiceberg's
    PyArrowFileIO builds from ``properties`` (the table's FileIO's: the catalog's S3 endpoint, keys, region),
    so a table on object storage is listed where pyiceberg reads it; S3 paths come back as ``bucket/key``
    whichever of ``s3``, ``s3a`` or ``s3n`` the location says (``normalize``). pyarrow follows S3's
    continuation tokens: a listing of any size comes back whole."""
    try:
        return [info for info in filesystem(location, properties).get_file_info(
                pafs.FileSelector(fs_path(location), recursive=True))
                if info.type == pafs.FileType.File]
    except FileNotFoundError:
        return []


def stored_files(location: str, properties: Mapping[str, str] | None = None) -> dict[str, int]:
    """Every file under a location and its size: what the table costs in storage, orphans included."""
    return {info.path: int(info.size or 0) for info in list_files(location, properties)}


@dataclass(frozen=True)
class _Reach:
    """What the metadata reaches, split for the comparison with a listing of ``location``."""

    location: str
    here: frozenset[str]  # normalized paths in the location's store
    elsewhere: Mapping[str, tuple[str, ...]]  # file name -> references in another store or outside the location

    @classmethod
    def of(cls, location: str, found: Iterable[str]) -> _Reach:
        mine, root = store(location), normalize(location).rstrip("/") + "/"
        here, elsewhere = set(), defaultdict(list)
        folders: dict[str, tuple[bool, str]] = {}  # a folder's store is mine, its normalized path (with its "/")
        for ref in found:  # a table's files share a few folders: each is split once, not each file thrice
            folder, slash, name = ref.rpartition("/")
            known = folders.get(folder + slash)
            if known is None:
                path = normalize(ref)
                known = (store(ref) == mine, path[:len(path) - len(name)])
                if slash and path.endswith("/" + name):
                    folders[folder + slash] = known
            else:
                path = known[1] + name
            if known[0]:
                here.add(path)
                if path.startswith(root):
                    continue
            elsewhere[path.rsplit("/", 1)[-1]].append(ref)
        return cls(location, frozenset(here), {k: tuple(sorted(v)) for k, v in elsewhere.items()})

    def namesake(self, relative: str) -> str | None:
        """A reference outside this location's store or prefix to the file at ``relative`` under it: the same
        file spelled with another scheme, bucket or prefix."""
        for ref in self.elsewhere.get(relative.rsplit("/", 1)[-1], ()):
            if normalize(ref).endswith("/" + relative):
                return ref
        return None


def describe_mismatch(reference: str, listed: str, relative: str) -> str:
    """What differs between the metadata's spelling of a file and the listing's: scheme, bucket, prefix."""
    ref, seen = split(reference), split(listed)
    differs = []
    if store(reference) != store(listed):
        differs.append(f"scheme {ref.scheme or 'file'}:// vs {seen.scheme or 'file'}://")
    if ref.authority != seen.authority:
        differs.append(f"bucket (authority) '{ref.authority}' vs '{seen.authority}'")
    ref_prefix, seen_prefix = ref.path[:-len(relative)].rstrip("/"), seen.path[:-len(relative)].rstrip("/")
    if ref_prefix != seen_prefix:
        differs.append(f"prefix '{ref_prefix}' vs '{seen_prefix}'")
    return ", ".join(differs)


def scan_orphans(table: Table, older_than: datetime, other_locations: Sequence[str] = ()) -> OrphanScan:
    """Compare a listing of the table location with what its metadata reaches.

    ``other_locations``: locations of the catalog's other tables; one inside this table's location would
    make its files look orphaned here, so removal is refused.
    """
    location = table.location()
    root = normalize(location).rstrip("/")
    nested = tuple(sorted(loc for loc in other_locations if normalize(loc).rstrip("/").startswith(root + "/")
                          or normalize(loc).rstrip("/") == root))
    listing = list_files(location, table.io.properties)
    reach = _Reach.of(location, references(table))
    partitions = hidden_partition_prefixes(table)
    old, young, hidden, mismatches = [], 0, 0, []
    for info in listing:
        path = normalize(info.path) if "://" in info.path else info.path
        if path in reach.here:
            continue
        relative = path[len(root) + 1:] if path.startswith(root + "/") else path
        if is_hidden(relative, partitions):
            hidden += 1
            continue
        namesake = reach.namesake(relative)
        if namesake is not None:
            mismatches.append((namesake, listed_location(location, path), relative))
        modified = info.mtime if info.mtime is not None else datetime.fromtimestamp(0).astimezone()
        if modified.tzinfo is None:
            modified = modified.astimezone()
        if modified < older_than:
            old.append(OrphanFile(path, int(info.size or 0), modified))
        else:
            young += 1
    listed_bytes = sum(int(i.size or 0) for i in listing)
    scan = OrphanScan(len(listing), listed_bytes, tuple(sorted(old, key=lambda f: f.path)), young,
                      nested_tables=nested, hidden=hidden,
                      mismatch=_mismatch(sorted(mismatches)) or _metadata_outside(table))
    return _plausible(scan)


def _mismatch(found: list[tuple[str, str, str]]) -> str | None:
    if not found:
        return None
    reference, listed, relative = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (f"the metadata names {reference} but the listing finds it as {listed}{more}: "
            f"{describe_mismatch(reference, listed, relative)} differ, so these files would look orphaned though "
            "the table uses them; correct the table location or the catalog before removing anything "
            "(Spark's remove_orphan_files refuses this too, prefix_mismatch_mode ERROR)")


def _metadata_outside(table: Table) -> str | None:
    """Why the table's own metadata file, outside its location, makes the location suspect (or None)."""
    location, metadata = table.location(), table.metadata_location
    roots = [location, *(p for p in [table.metadata.properties.get("write.metadata.path")] if p)]
    if any(store(metadata) == store(root) and normalize(metadata).startswith(normalize(root).rstrip("/") + "/")
           for root in roots):
        return None
    return (f"the current metadata file {metadata} is outside the table location {location}: the listing of the "
            "location may not be this table's files; correct the location before removing anything")


def _plausible(scan: OrphanScan) -> OrphanScan:
    if scan.nested_tables:
        return replace(scan, refused=f"the location holds another table's files ({', '.join(scan.nested_tables)})")
    if scan.mismatch is not None:
        return replace(scan, refused=scan.mismatch)
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


@dataclass(frozen=True)
class Removal:
    """What ``remove_orphans`` did: the scan it removed by, and the files it deleted as the location spells them."""

    scan: OrphanScan
    deleted: tuple[str, ...] = ()


def remove_orphans(table: Table, older_than: datetime) -> Removal:
    """Scan the table location now and delete the unreferenced files older than ``older_than``; nothing when the
    scan refuses (its ``refused`` says why). A file gone meanwhile is not counted."""
    scan = scan_orphans(table, older_than)
    if scan.refused is not None:
        return Removal(scan)
    location = table.location()
    files, deleted = filesystem(location, table.io.properties), []
    for orphan in scan.old:
        try:
            files.delete_file(orphan.path)
        except FileNotFoundError:
            continue
        deleted.append(listed_location(location, orphan.path))
    drop_checksums(files, [orphan.path for orphan in scan.old])
    return Removal(scan, tuple(deleted))


def drop_checksums(files: pafs.FileSystem, deleted: Iterable[str]) -> None:
    """Delete the ``.NAME.crc`` beside each deleted file on local disk: Hadoop's local filesystem (Spark's) writes
    one per file and deletes it with the file; hidden, it is never an orphan, so nothing else would."""
    if not isinstance(files, pafs.LocalFileSystem):
        return
    for path in deleted:
        folder, _, name = path.rpartition("/")
        try:
            files.delete_file(f"{folder}/.{name}.crc")
        except FileNotFoundError:
            continue
