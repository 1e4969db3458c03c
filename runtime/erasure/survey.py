"""Which files hold a subject's key, read from storage, and which snapshots still reach them.

Candidates are every parquet file listed under the table location (and ``write.data.path``), referenced
or not, plus every data file any kept snapshot references wherever it is stored. Each candidate's key
columns are read with pyarrow and joined with the key set: the answer comes from the bytes in storage,
so orphans of an interrupted expiry and rows masked by delete files are found too. Metadata only ever
removes work, never a finding: a file whose manifest bounds, row-group statistics or bloom filters show it
holds no key is not read (runtime/erasure/pruning.py), every other file is.

"Reaches" means a live manifest entry (added or existing) of a snapshot: a file that is only a deleted
entry in some manifest is readable by no snapshot, which is also how Iceberg's expiry decides what to
delete. Files are immutable, so a run reads each (path, size) once and reuses the answer: the surveys after the
DELETE and the expiry read only the files written since (the proof reads everything again, on its own).

Manifests under the locations, referenced or not, are read too, for bounds that reveal a key
(runtime/erasure/manifests.py has the rule).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from pyarrow import fs as pafs
from pyiceberg.io import FileIO
from pyiceberg.manifest import FileFormat, ManifestEntryStatus, ManifestFile
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from tablepolicy.compiler.erasure.cost import Placement

from ..locations import filesystem
from ..manifests import READS, ManifestReads, TableDamaged, reason_of
from ..orphans import normalize
from .file_scan import FileRead, HeldFile
from .file_task import Candidate, Outcome, Unread, scan
from .keys import KeySet
from .manifests import DEFAULT_TRUNCATE, BoundHit, KeyBounds, ManifestReader
from .pruning import Evidence, FileBounds, KeyProbe, Pruning
from .runners import IN_THIS_PROCESS, Runner, Threads

Runners = Callable[[int], Runner]  # the bytes listed under a table's locations -> where its files are read


@dataclass(frozen=True)
class Reach:
    """What a table's metadata reaches: per snapshot, the data files it reads."""

    live: dict[int, frozenset[str]]  # snapshot id -> normalized paths of its live data and delete files
    manifests: dict[int, frozenset[str]]  # snapshot id -> normalized paths of the manifests it reads
    formats: dict[str, FileFormat]  # normalized path -> format of every referenced file
    uris: dict[str, str]  # normalized path -> the path as the metadata spells it (files, manifests, lists)
    lists: frozenset[str]  # normalized paths of the snapshots' manifest lists
    hits: dict[str, tuple[BoundHit, ...]]  # manifest a snapshot reads -> its entries revealing a key
    list_of: dict[int, str] = field(default_factory=dict)  # snapshot id -> normalized path of its manifest list
    bounds: dict[str, FileBounds] = field(default_factory=dict)  # data file -> its key columns' manifest bounds

    def reached_by(self, snapshots: Iterable[int]) -> set[str]:
        """Everything the snapshots read: their manifest lists, manifests, live data and delete files."""
        found: set[str] = set()
        for snapshot in snapshots:
            found |= self.live.get(snapshot, frozenset()) | self.manifests.get(snapshot, frozenset())
            if snapshot in self.list_of:
                found.add(self.list_of[snapshot])
        return found

    def snapshots_reaching(self, paths: Iterable[str]) -> dict[int, frozenset[str]]:
        wanted = frozenset(paths)
        return {s: hit for s, files in self.live.items() if (hit := files & wanted)}

    @property
    def all_manifests(self) -> frozenset[str]:
        return frozenset().union(*self.manifests.values())


@dataclass(frozen=True)
class Survey:
    reach: Reach
    held: dict[str, HeldFile]  # path -> a file that holds a key, referenced or not
    stored: dict[str, str]  # every file listed under the table's locations -> the location it is under
    files_read: int
    bytes_read: int
    unreadable: tuple[str, ...] = ()  # files the proof cannot read (referenced files not in parquet, files named
    # .parquet that are none): not proven
    clean: frozenset[str] = frozenset()  # files read that hold no key
    bound_hits: dict[str, tuple[BoundHit, ...]] = field(default_factory=dict)  # manifest -> entries with a key
    manifests_read: int = 0
    sizes: dict[str, int] = field(default_factory=dict)  # every listed file -> its size when listed
    pruning: Pruning = field(default_factory=lambda: Pruning(enabled=False))  # how each candidate was decided
    placement: Placement = IN_THIS_PROCESS  # where its data files were read, and why

    @property
    def debris(self) -> list[str]:
        """Unreadable files no snapshot reaches (what a writer killed half way leaves): they might hold a key and
        nothing needs them."""
        reached = self.reach.reached_by(self.reach.live)
        return sorted(p for p in self.unreadable if p in self.stored and p not in reached)

    @property
    def rows(self) -> int:
        return sum(f.rows for f in self.held.values())

    def live_in(self, snapshot: int | None) -> set[str]:
        return set(self.reach.live.get(snapshot, frozenset()) & self.held.keys()) if snapshot is not None else set()

    @property
    def referenced(self) -> set[str]:
        return set().union(*self.reach.snapshots_reaching(self.held).values())

    @property
    def orphans(self) -> list[str]:
        """Files in storage holding a key that no snapshot reaches."""
        return sorted(set(self.held) & self.stored.keys() - self.referenced)

    @property
    def manifests_with_keys(self) -> list[str]:
        """Manifests in storage with a bound revealing a key, on an entry whose file is not known clean."""
        return sorted(path for path, hits in self.bound_hits.items() if any(h.data_file not in self.clean
                                                                             for h in hits))

    def bounded(self) -> dict[int, dict[str, frozenset[int]]]:
        """Per snapshot reading a manifest with a key as a bound: data file -> the subjects its entry reveals."""
        revealing = set(self.manifests_with_keys)
        found: dict[int, dict[str, frozenset[int]]] = {}
        for snapshot, read in self.reach.manifests.items():
            for path in sorted(read & revealing):
                for hit in self.bound_hits[path]:
                    if hit.data_file not in self.clean:
                        files = found.setdefault(snapshot, {})
                        files[hit.data_file] = files.get(hit.data_file, frozenset()) | set(hit.subjects)
        return found

    def bounded_in(self, snapshot: int | None) -> dict[str, frozenset[int]]:
        return self.bounded().get(snapshot, {}) if snapshot is not None else {}

    @property
    def manifest_orphans(self) -> list[str]:
        """Those of them no snapshot reads."""
        return sorted(set(self.manifests_with_keys) - self.reach.all_manifests)


GONE, NOT_PARQUET = Unread.GONE, Unread.NOT_PARQUET  # a manifest's too


@dataclass
class FileReader:
    """Reads files' key columns; remembers the answer per (path, size) for the rest of the run."""

    keys: KeySet
    truncations: frozenset[int] = frozenset({DEFAULT_TRUNCATE})  # the table's string bound lengths
    probe: KeyProbe | None = None  # metadata pruning (runtime/erasure/pruning.py); None: every file's keys read
    seen: dict[tuple[str, int], FileRead] = field(default_factory=dict)
    shared: bool = False  # manifests decoded into the process's READS, which the rewrite and the commits read
    # too (one decoding of each manifest per run); False, its own: the proof's reader decodes everything again
    manifests: ManifestReader = field(init=False)  # avro files no snapshot reads
    metadata: MetadataCache = field(init=False)  # manifest lists and manifests snapshots read

    def __post_init__(self) -> None:
        self.manifests = ManifestReader(self.keys, self.truncations)
        self.metadata = MetadataCache(self.manifests.bounds, reads=READS if self.shared else ManifestReads())

    def wrote_without_keys(self, written: Iterable[tuple[str, int]]) -> None:
        """Files this run wrote from rows the key set was already matched against (the rewrite's): held as read
        and clean, so the surveys after the delete do not read them again (the proof, with its own reader, does)."""
        for path, size in written:
            self.seen[(normalize(path), size)] = FileRead(None, Evidence.WRITTEN)

    def read(self, candidates: list[Candidate], runner: Runner) -> dict[str, Outcome]:
        """Each candidate's outcome: those not read before by ``runner`` (file_task.scan, wherever it runs),
        remembered when they were read (a file gone or unreadable is tried again by the next survey). An exclusion
        by metadata says what a read would: no key, so the answer per (path, size) stays one whatever decided it."""
        fresh = [c for c in candidates if (c.path, c.size) not in self.seen]
        outcomes = dict(zip((c.path for c in fresh),
                            runner.map(functools.partial(scan, self.keys, self.probe), fresh), strict=True))
        for candidate in fresh:
            if not isinstance(outcome := outcomes[candidate.path], Unread):
                self.seen[(candidate.path, candidate.size)] = outcome
        return {c.path: outcomes[c.path] if c.path in outcomes else self.seen[(c.path, c.size)] for c in candidates}


@dataclass(frozen=True)
class ManifestRead:
    """What erasure needs of one manifest: its live files, and the entries whose bounds reveal a key."""

    live: dict[str, tuple[str, FileFormat]]  # normalized path -> (the path as spelled, format)
    hits: tuple[BoundHit, ...]
    bounds: dict[str, FileBounds] = field(default_factory=dict)  # every entry's file -> its key columns' bounds


@dataclass(frozen=True)
class ListRead:
    """One manifest list: its manifests and the live files they list together."""

    uris: dict[str, str]  # normalized path -> as spelled, for each manifest
    live: frozenset[str]

    @property
    def manifests(self) -> frozenset[str]:
        """Normalized paths of its manifests."""
        return frozenset(self.uris)


@dataclass
class MetadataCache:
    """Manifest lists and manifests decoded once: files are immutable, so a run reads only those written
    since its last survey (decoding them is most of a survey's cost on a table of many snapshots)."""

    bounds: KeyBounds | None = None  # None: no bounds wanted (the leftovers' last check of the metadata)
    lists: dict[str, ListRead] = field(default_factory=dict)
    manifests: dict[str, ManifestRead] = field(default_factory=dict)  # by normalized path
    reads: ManifestReads = field(default_factory=lambda: READS)  # the process's (health's, the orphan decision's)

    def list_of(self, snapshot: Snapshot, io: FileIO) -> ListRead:
        if snapshot.manifest_list not in self.lists:
            uris: dict[str, str] = {}
            live: set[str] = set()
            listed = self.reads.manifests(io, snapshot)  # torn, emptied or gone: TableDamaged names it
            for manifest in listed:
                path = normalize(manifest.manifest_path)
                if path not in self.manifests:
                    try:
                        self.manifests[path] = self._read(manifest, io)
                    except TableDamaged as exc:  # named with the snapshot that reads it
                        raise TableDamaged(manifest.manifest_path, f"a manifest snapshot {snapshot.snapshot_id} reads",
                                           reason_of(exc.__cause__ or exc)) from exc.__cause__
                uris[path] = manifest.manifest_path
                live |= self.manifests[path].live.keys()
            self.lists[snapshot.manifest_list] = ListRead(uris, frozenset(live))
        return self.lists[snapshot.manifest_list]

    def _read(self, manifest: ManifestFile, io: FileIO) -> ManifestRead:
        entries = self.reads.entries(io, manifest, discard_deleted=False)
        wanted = self.bounds.exact.keys() if self.bounds is not None else ()  # the key columns' field ids
        live: dict[str, tuple[str, FileFormat]] = {}
        bounds: dict[str, FileBounds] = {}
        for entry in entries:
            data_file = entry.data_file
            path = normalize(data_file.file_path)
            if entry.status != ManifestEntryStatus.DELETED:
                live[path] = (data_file.file_path, data_file.file_format)
            if wanted:
                lower, upper = data_file.lower_bounds or {}, data_file.upper_bounds or {}
                bounds[path] = FileBounds(data_file.file_size_in_bytes, {i: lower[i] for i in wanted if i in lower},
                                          {i: upper[i] for i in wanted if i in upper})
        if self.bounds is None:
            return ManifestRead(live, ())
        return ManifestRead(live, self.bounds.hits(entries), bounds)


def table_reach(table: Table, cache: MetadataCache | None = None) -> Reach:
    """Live files of every snapshot; each manifest list and manifest is read once (snapshots share most of
    their manifests; with ``cache``, surveys of one run share them too)."""
    cache = cache or MetadataCache()
    live: dict[int, frozenset[str]] = {}
    manifests: dict[int, frozenset[str]] = {}
    uris: dict[str, str] = {}
    for snapshot in table.metadata.snapshots:
        read = cache.list_of(snapshot, table.io)
        live[snapshot.snapshot_id], manifests[snapshot.snapshot_id] = read.live, read.manifests
        uris |= read.uris
        uris[normalize(snapshot.manifest_list)] = snapshot.manifest_list
    used = {path: cache.manifests[path] for path in frozenset().union(*manifests.values())}
    formats = {path: f for content in used.values() for path, (_, f) in content.live.items()}
    uris |= {path: uri for content in used.values() for path, (uri, _) in content.live.items()}
    list_of = {s.snapshot_id: normalize(s.manifest_list) for s in table.metadata.snapshots}
    bounds = {path: b for content in used.values() for path, b in content.bounds.items()}  # an immutable file's
    # entries agree; the size check in pruning guards a path written again
    return Reach(live, manifests, formats, uris, frozenset(list_of.values()),
                 {path: content.hits for path, content in used.items()}, list_of, bounds)


def locations(table: Table) -> list[str]:
    """Where the table's files are written: its location, and a separate data path if one is set."""
    found = [table.location()]
    data_path = table.properties.get("write.data.path")
    if data_path and not normalize(data_path).startswith(normalize(table.location()).rstrip("/") + "/"):
        found.append(data_path)
    return found


def filesystem_for(uri: str, cache: dict[tuple[str, str], pafs.FileSystem],
                   properties: Mapping[str, str] | None = None) -> pafs.FileSystem:
    """The filesystem pyiceberg reads ``uri`` with (runtime/locations.py), one per scheme and bucket of a run."""
    return filesystem(uri, properties, cache)


def list_stored(table: Table, cache: dict[tuple[str, str], pafs.FileSystem]) -> dict[str, tuple[str, int]]:
    """Every file under the table's locations: normalized path -> (location uri, size)."""
    stored: dict[str, tuple[str, int]] = {}
    for location in locations(table):
        filesystem = filesystem_for(location, cache, table.io.properties)
        try:
            listing = filesystem.get_file_info(pafs.FileSelector(normalize(location), recursive=True))
        except FileNotFoundError:
            continue
        for info in listing:
            if info.type == pafs.FileType.File:
                stored[normalize(info.path)] = (location, int(info.size or 0))
    return stored


def survey(table: Table, reader: FileReader, cache: dict[tuple[str, str], pafs.FileSystem],
           on_progress: Callable[[str], None] = lambda _m: None, runners: Runners = lambda _b: Threads()) -> Survey:
    """``runners``: where the data files are read, given the bytes listed (runtime/erasure/runners.py); manifests
    are read in this process."""
    reach = table_reach(table, reader.metadata)
    stored = list_stored(table, cache)
    candidates: dict[str, tuple[pafs.FileSystem, int]] = {}
    unreadable = []
    for path, (location, size) in stored.items():
        if path.lower().endswith(".parquet"):
            candidates[path] = (filesystem_for(location, cache, table.io.properties), size)
    for path, file_format in reach.formats.items():
        if path in candidates:
            continue
        if file_format != FileFormat.PARQUET:
            unreadable.append(path)
        elif path not in stored:  # referenced from outside the listed locations
            filesystem = filesystem_for(reach.uris[path], cache, table.io.properties)
            info = filesystem.get_file_info(path)
            if info.type == pafs.FileType.File:
                candidates[path] = (filesystem, int(info.size or 0))
    runner = runners(sum(size for _, size in stored.values()))
    fresh = sum((path, size) not in reader.seen for path, (_, size) in candidates.items())
    on_progress(f"reading the key columns of {fresh} file(s)"
                + (f" ({len(candidates) - fresh} read before, unchanged)" if fresh < len(candidates) else "")
                + f" in {runner.placement.text}")
    listed = [Candidate(path, filesystem, size, reach.bounds.get(path))
              for path, (filesystem, size) in sorted(candidates.items())]
    results = reader.read(listed, runner)  # NOT_PARQUET: unreadable (damage if a snapshot reads it: decided below)

    # the manifests snapshots read came with the metadata; their lists hold no column values; any other avro
    # file is read by itself (an orphaned manifest, or a list: its header says which)
    avro = {path: (filesystem_for(location, cache, table.io.properties), size)
            for path, (location, size) in stored.items()
            if path.lower().endswith(".avro") and path not in reach.hits and path not in reach.lists}

    def bounds(item: tuple[str, tuple[pafs.FileSystem, int]]) -> tuple[BoundHit, ...] | Unread | None:
        path, (filesystem, size) = item
        try:
            return reader.manifests.hits(filesystem, path, size)
        except FileNotFoundError:
            return GONE
        except Exception:  # a half-written avro file no snapshot reads: unreadable, debris
            return NOT_PARQUET

    manifests = dict(zip(sorted(avro), Threads().map(bounds, sorted(avro.items())), strict=True))
    found = [f.held for f in results.values() if isinstance(f, FileRead) and f.held is not None]
    torn = sorted(p for p, f in [*results.items(), *manifests.items()] if f is NOT_PARQUET)
    reached = reach.reached_by(reach.live)
    if damaged := [p for p in torn if p in reached]:
        snapshots = sorted(s for s in reach.live if damaged[0] in reach.reached_by([s]))
        raise TableDamaged(reach.uris.get(damaged[0], damaged[0]),
                           f"a data or delete file snapshot(s) {', '.join(map(str, snapshots))} read",
                           "not a parquet file: no footer or a torn one")
    unreadable += torn
    return Survey(reach, {f.path: f for f in found}, {p: loc for p, (loc, _) in stored.items()}, len(candidates),
                  sum(size for _, size in candidates.values()), tuple(sorted(unreadable)),
                  clean=frozenset(p for p, f in results.items() if isinstance(f, FileRead) and f.held is None),
                  bound_hits={p: h for p, h in [*reach.hits.items(), *manifests.items()] if isinstance(h, tuple) and h},
                  manifests_read=len(reach.hits) + sum(isinstance(h, tuple) for h in manifests.values()),
                  sizes={p: size for p, (_, size) in stored.items()}, placement=runner.placement,
                  pruning=_pruning(reader.probe is not None, results, candidates))


def _pruning(enabled: bool, results: Mapping[str, Outcome],
             candidates: Mapping[str, tuple[pafs.FileSystem, int]]) -> Pruning:
    files: dict[Evidence, int] = {}
    sizes: dict[Evidence, int] = {}
    for path, result in results.items():
        if isinstance(result, FileRead):
            files[result.evidence] = files.get(result.evidence, 0) + 1
            sizes[result.evidence] = sizes.get(result.evidence, 0) + candidates[path][1]
    return Pruning(enabled, files, sizes)
