"""erase: delete the subjects' rows, physically remove every file that held them, and prove it from storage.

An erasure is done when no retained file holds the key, not when queries stop returning it (seed 001).
Per table, each step decided by what storage holds now, so a run killed anywhere (or following someone
else's DELETE) is finished by the next one:
1. survey: every parquet file under the table location and every file a snapshot reads, key columns read
   with pyarrow and matched against the key set (runtime/erasure/survey.py), except files whose metadata
   (manifest bounds, row-group statistics, bloom filters) shows they hold no key (``prune``: on by default);
2. if the current snapshot reads a file holding a key: those files rewritten without the keys' rows (pyarrow,
   or Spark with the keys as a temporary view) and swapped in by one validated overwrite; then, if a file
   behind a delete file still holds one (merge-on-read), rewrite those files; the current snapshot's
   manifests that keep a key as a bound (another engine's DELETE writes them) are rewritten;
3. each tag or branch that keeps a snapshot reading a key, as the policy decides per ref
   (``lifecycle.erasure.refs``, ``holds``): hold keeps it (state "held"); rewrite deletes the keys through it
   as in 2, committed on the branch, or for a tag on a new snapshot the tag is re-pointed to (retention kept);
   expire drops the ref; a ref with no decision blocks (named with its requests and the three choices);
   then expire exactly the snapshots that read a file holding a key (older history stays readable), except
   those a ref still keeps;
4. delete the files holding a key that no snapshot reads any more (what an interrupted expiry leaves), and
   the manifests no snapshot reads whose column bounds reveal a key (runtime/erasure/manifests.py), and the
   unreadable files no snapshot reads (torn by a killed writer: they might hold a key), after checking the latest
   metadata again, once older than the debris age guard (younger ones may be another writer's file in flight:
   kept, named in the proof, which stays incomplete); an unreadable file a snapshot reads stops the table with a
   finding naming it (damage);
5. prove: a fresh listing and read of storage; no file holds a key (no manifest bound reveals one), or only
   files a declared hold keeps.

Every commit goes through pyiceberg (runtime/erasure/commits.py): Spark starts only for a step pyarrow cannot
do (arrow_rewrite.LeftToSpark). Its JVM's boot and first calls were most of a small erasure's time.
"""

from __future__ import annotations

import functools
import itertools
import operator
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pyarrow import fs as pafs
from pyiceberg.table import Table

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.diagnostics import Diagnostics
from tablepolicy.compiler.erasure.cost import ErasureCost, Placement
from tablepolicy.compiler.erasure.plan import ErasurePreview, ExpiredSnapshot, RefStep, TableErasure
from tablepolicy.compiler.errors import PolicyError
from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.render.erasure import drop_ref_sql, ref_rewrite_text, rewrite_sql

from .catalog.reader import CatalogReader
from .erasure.arrow_rewrite import LeftToSpark, StagedRewrite, rewrite_placement, stage_rewrite
from .erasure.commits import (
    commit_rewrite,
    drop_dangling,
    drop_dangling_text,
    drop_ref,
    expire,
    expire_text,
    pause,
    rewrite_manifests,
    rewrite_manifests_text,
)
from .erasure.keys import KeySet, key_set
from .erasure.leftovers import DEBRIS_MIN_AGE, delete_debris, delete_unreferenced, manifests
from .erasure.manifests import truncations
from .erasure.proof import ProofStep, RefOutcome, TableProof
from .erasure.pruning import SKIPPED, KeyProbe
from .erasure.refs import hold_findings, keeping_refs, kept_by_refs
from .erasure.runners import DEFAULT_CLUSTER_ABOVE, OnCluster, Runner, Threads, placement
from .erasure.snapshot_delete import TEMPORARY_BRANCH
from .erasure.spark_steps import BY_PYARROW, delete_rows, delete_statement, rewrite_masked
from .erasure.survey import FileReader, Runners, Survey, survey, table_reach
from .executor import ExecutionError
from .lock import catalog_locks
from .redaction import register
from .spark.session import SessionOnDemand, SparkOptions

Progress = Callable[[str], None]


def run_erasure(
    tables: list[TableErasure], catalog: CatalogConfig, options: SparkOptions, *, lock_dir: Path,
    on_progress: Progress = lambda _m: None, session: SessionOnDemand | None = None, now: datetime | None = None,
    debris_min_age: timedelta = DEBRIS_MIN_AGE, prune: bool = True, cluster_above: int | None = None,
) -> list[TableProof]:
    """Erase and prove every table; a table whose step fails is reported failed, the others still run.
    Holds naming no ref (TP443) are refused before anything runs. ``session``: the run's Spark session, started
    only if a step needs Spark (the cases ``LeftToSpark`` names). ``now``: the run's instant (the CLI takes it from
    the clock); unreadable files no snapshot reads are deleted only when modified before ``now - debris_min_age``.
    ``prune``: False reads every file's key columns, metadata excluding none (audits, benchmarks' baseline).
    ``cluster_above``: with a cluster master, a table listing more bytes is read by the executors (runtime/erasure/
    runners.py; None: each table's lifecycle.erasure.cluster_above, else runners.DEFAULT_CLUSTER_ABOVE)."""
    now = now or datetime.now(UTC)
    register(catalog)  # a table's error in its proof is masked with this catalog's secrets (runtime/redaction.py)
    with CatalogReader(catalog) as reader:
        _check_holds(reader, tables, on_progress)
        starting = session or SessionOnDemand(catalog, options)
        spark = starting.session
        proofs = []
        with catalog_locks(reader, [format_name(t.table) for t in tables], lock_dir):
            for erasure in tables:
                started = time.perf_counter()
                proof = TableProof(erasure.table, erasure.requests())
                try:
                    _erase(spark, reader, erasure, proof, _prefixed(on_progress, format_name(erasure.table)),
                           starting.options, _Debris(now, debris_min_age), _threshold(erasure, cluster_above),
                           prune=prune)
                except ExecutionError as exc:  # the proof still says what happened to every table
                    proof.error = str(exc)
                proof.seconds = time.perf_counter() - started
                proofs.append(proof)
    return proofs


def _prefixed(on_progress: Progress, name: str) -> Progress:
    return lambda message: on_progress(f"{name}: {message}")


def preview_erasure(tables: list[TableErasure], catalog: CatalogConfig, on_warning: Progress = lambda _m: None, *,
                    master: str = "local[2]", cluster_above: int | None = None, prune: bool = True
                    ) -> list[ErasurePreview]:
    """The dry run: what holds the keys, every statement a run would start with, and what the run will read and
    rewrite where (the reads themselves run here, with the run's pruning; ``master`` and ``cluster_above`` decide
    where the run would read); no JVM."""
    with CatalogReader(catalog) as reader:
        _check_holds(reader, tables, on_warning)
        return [_preview(reader, erasure, catalog.name, master, _threshold(erasure, cluster_above), prune)
                for erasure in tables]


def _threshold(erasure: TableErasure, flag: int | None) -> int:
    """The bytes above which a cluster master reads the table: the flag, else the policy's, else the default."""
    return flag or erasure.cluster_above or DEFAULT_CLUSTER_ABOVE


def _check_holds(reader: CatalogReader, tables: list[TableErasure], on_warning: Progress) -> None:
    """TP443 refuses the run; a TP447 warning (an expire decision whose ref is gone) is shown and the run goes on."""
    findings = Diagnostics()
    for erasure in tables:
        findings.extend(hold_findings(erasure, _fresh(reader, erasure.table)))
    if findings.has_errors:
        raise PolicyError(findings)
    for warning in findings:
        on_warning(warning.render())


def _fresh(reader: CatalogReader, name: tuple[str, ...]) -> Table:
    table = reader.pyiceberg_table(name, fresh=True)
    if table is None:
        raise ExecutionError(f"{format_name(name)} does not exist in the catalog any more")
    return table


class _Run:
    """One table's erasure: its key set, the files already read, the filesystems opened."""

    def __init__(self, reader: CatalogReader, erasure: TableErasure, on_progress: Progress,
                 runners: Runners = lambda _listed: Threads(), *, prune: bool = True) -> None:
        self.reader, self.erasure, self.on_progress, self.runners = reader, erasure, on_progress, runners
        self.table = _fresh(reader, erasure.table)
        self.keys: KeySet = key_set(erasure, self.table.schema())
        self.probe = KeyProbe.of(self.keys) if prune else None  # the keys hashed once per run, the proof's too
        self.files = self.reader_of_files(shared=True)
        self.filesystems: dict[tuple[str, str], pafs.FileSystem] = {}

    def survey(self, *, independent: bool = False) -> Survey:
        """Storage as it is now (``independent``: every file read again, nothing remembered)."""
        self.table = self.latest()
        files = self.reader_of_files() if independent else self.files
        return survey(self.table, files, self.filesystems, self.on_progress, self.runners)

    def latest(self) -> Table:
        """The table as the catalog holds it now."""
        return _fresh(self.reader, self.erasure.table)

    def reader_of_files(self, *, shared: bool = False) -> FileReader:
        """``shared``: the run's reader, whose manifests the rewrite and the commits reuse (survey.FileReader)."""
        return FileReader(self.keys, truncations(self.table.properties), self.probe, shared=shared)

    @property
    def current(self) -> int | None:
        return self.table.metadata.current_snapshot_id

    def expirable(self, found: Survey, released: frozenset[str] = frozenset()) -> list[ExpiredSnapshot]:
        """Snapshots that read a file holding a key, or a manifest with a key as a column bound, and that no
        ref keeps (the current one too: after a DELETE it is history). ``released``: refs taken as no longer
        keeping theirs (the dry run's rewrites and drops)."""
        refs = kept_by_refs(self.table, {h.ref for h in self.erasure.holds})
        kept = set().union(*(ids for ref, ids in refs.items() if ref not in released))
        reading = found.reach.snapshots_reaching(found.held)
        bounded = found.bounded()
        named = _RequestBits(self.keys.requests)
        of_file = {path: named.of(held.requests) for path, held in found.held.items()}
        expired = []
        for sid in sorted(set(reading) | set(bounded)):
            if sid in kept:
                continue
            bounds = bounded.get(sid, {})
            requests = functools.reduce(operator.or_, (of_file[f] for f in reading.get(sid, ())), 0)
            requests |= named.of(self.keys.requests[i] for subjects in bounds.values() for i in subjects)
            expired.append(ExpiredSnapshot(sid, tuple(sorted(set(reading.get(sid, ())) | bounds.keys())),
                                           named.ids(requests)))
        return expired


class _RequestBits:
    """Sets of request ids as the bits of an int, bit i for the i-th id in sorted order: a snapshot's requests are
    the OR of its files' and come out sorted. 240 snapshots reading up to 240 files of 400 requests each (random
    keys): 0.1 s, where building and sorting a set per snapshot took 0.8 s."""

    _DIGITS = bytes.maketrans(b"01", b"\x00\x01")

    def __init__(self, ids: Iterable[str]) -> None:
        self.order = sorted(set(ids))
        self.rank = {request: i for i, request in enumerate(self.order)}

    def of(self, ids: Iterable[str]) -> int:
        return functools.reduce(operator.or_, (1 << self.rank[request] for request in ids), 0)

    def ids(self, bits: int) -> tuple[str, ...]:
        """The ids of ``bits``, sorted (its binary digits, lowest first, select them)."""
        return tuple(itertools.compress(self.order, bin(bits)[:1:-1].encode().translate(self._DIGITS)))


class _Debris:
    """The age guard of debris deletion: the run's instant and the minimum age."""

    def __init__(self, now: datetime, min_age: timedelta) -> None:
        self.now, self.min_age = now, min_age


def _erase(
    session: Callable[[], Any], reader: CatalogReader, erasure: TableErasure, proof: TableProof,
    on_progress: Progress, options: SparkOptions, guard: _Debris, cluster_above: int = DEFAULT_CLUSTER_ABOVE, *,
    prune: bool = True,
) -> None:
    def runners(listed: int) -> Runner:
        chosen = placement(options.master, listed, cluster_above)
        return OnCluster(session, chosen) if chosen.cluster else Threads(chosen)

    run = _Run(reader, erasure, on_progress, runners, prune=prune)
    catalog = reader.config.name
    found = run.survey()
    proof.survey_ran = found.placement
    current = found.live_in(run.current)
    proof.files_with_keys = sorted(found.held)
    proof.rows_before = sum(found.held[f].rows for f in current)
    name, latest = format_name(erasure.table), run.latest
    steps = _Steps(proof)
    if current:
        on_progress(f"deleting the rows of {len(erasure.subjects)} subject(s) from {len(current)} file(s)")
        holding = frozenset(current)
        cluster = not options.master.startswith("local")
        staged = stage_rewrite(run.table, holding, run.keys, cluster=cluster)
        if isinstance(staged, StagedRewrite):
            staged = commit_rewrite(name, latest, staged, lambda table: stage_rewrite(table, holding, run.keys,
                                                                                cluster=cluster))
        if isinstance(staged, LeftToSpark):
            proof.statements.append(delete_rows(session(), erasure.table, catalog, run.keys, holding, staged))
        else:
            run.files.wrote_without_keys(w for f in staged.files for w in f.written)
            proof.statements.append(BY_PYARROW + delete_statement(erasure.table, catalog, run.keys))
        found = steps.done("delete_rows", current, _drop_dangling(run, proof, name), sizes=found.sizes)
        if masked := found.live_in(run.current):
            on_progress("rewriting the files a merge-on-read delete masked")
            proof.statements.append(rewrite_masked(session(), erasure.table, catalog))
            found = steps.done("rewrite_masked", masked, _drop_dangling(run, proof, name), sizes=found.sizes)
        if still := found.live_in(run.current):
            raise ExecutionError(f"{format_name(erasure.table)}: erasure: after the DELETE the current snapshot "
                                 f"still reads {len(still)} file(s) holding a key: {', '.join(sorted(still))}")
        proof.files_rewritten = sorted(current)
    if bounds := found.bounded_in(run.current):  # deleted entries another engine wrote with their statistics
        on_progress(f"rewriting the manifests of the current snapshot: {len(bounds)} entr(ies) keep a key as a "
                    "column bound")
        revealing = frozenset(found.manifests_with_keys) & found.reach.manifests.get(run.current or 0, frozenset())
        rewrite_manifests(name, latest, revealing)
        proof.statements.append(rewrite_manifests_text(erasure.table, catalog))
        found = steps.done("rewrite_manifests", revealing, run.survey(), sizes=found.sizes)
        if left := found.bounded_in(run.current):
            raise ExecutionError(f"{format_name(erasure.table)}: erasure: after the manifest rewrite the current "
                                 f"snapshot still reads manifests with {len(left)} entr(ies) whose column bounds "
                                 "hold a key")
    found = _through_refs(session, run, proof, steps, found, cluster=not options.master.startswith("local"))
    targets = [s for s in run.expirable(found) if s.snapshot_id != run.current]
    if targets:
        ids = [s.snapshot_id for s in targets]
        on_progress(f"expiring {len(ids)} snapshot(s) that read erased rows (or keep them as bounds)")
        deleted = expire(name, latest, ids, found.reach, lambda table: table_reach(table, run.files.metadata))
        on_progress(f"deleted {len(deleted)} file(s) only the expired snapshots read")
        proof.statements.append(expire_text(erasure.table, catalog, ids))
        proof.snapshots_expired = targets
        found = steps.done("expire_snapshots", deleted, run.survey(), sizes=found.sizes)
    if found.orphans:
        on_progress(f"deleting {len(found.orphans)} unreferenced file(s) that hold a key")
        pause()
        proof.orphans_deleted = delete_unreferenced(latest, {p: found.stored[p] for p in found.orphans},
                                                    run.filesystems)
        steps.done("delete_orphans", proof.orphans_deleted, found)
    if found.manifest_orphans:
        on_progress(f"deleting {len(found.manifest_orphans)} unreferenced manifest(s) whose column bounds hold a key")
        pause()
        proof.manifests_deleted = delete_unreferenced(
            latest, {p: found.stored[p] for p in found.manifest_orphans}, run.filesystems, manifests)
        steps.done("delete_manifests", proof.manifests_deleted, found)
    if debris := found.debris:
        on_progress(f"deleting {len(debris)} unreadable file(s) no snapshot reads (a killed writer's leftovers; "
                    "they might hold a key)")
        pause()
        proof.debris_deleted, proof.debris_pending = delete_debris(
            latest, {p: found.stored[p] for p in debris}, found.sizes, run.filesystems, now=guard.now,
            min_age=guard.min_age)
        steps.done("delete_debris", proof.debris_deleted, found)
        if proof.debris_pending:
            on_progress(f"kept {len(proof.debris_pending)} of them: written less than {age_text(guard.min_age)} "
                        "ago, maybe by a writer still running")
    _prove(run, proof)


class _Steps:
    """Each step of a table's erasure into its proof: seconds since the step before ended (the first starts
    after the survey that found the keys, so a step's time includes the survey that checks it), the files it
    replaced or deleted and their bytes as the listing before it sized them."""

    def __init__(self, proof: TableProof) -> None:
        self.proof, self.mark = proof, time.perf_counter()

    def done(self, action: str, files: Iterable[str], after: Survey, *, sizes: Mapping[str, int] | None = None
             ) -> Survey:
        """``sizes``: the listing before the step (default: ``after``'s, for deletions that list nothing again);
        returns ``after``, the survey the run goes on with."""
        now, paths = time.perf_counter(), sorted(set(files))
        known = [size for p in paths if (size := (after.sizes if sizes is None else sizes).get(p)) is not None]
        self.proof.steps.append(ProofStep(action, now - self.mark, len(paths),
                                          sum(known) if len(known) == len(paths) else None))
        self.mark = now
        return after


def age_text(age: timedelta) -> str:
    """A duration as the policies write it: 3d, 6h, 0s."""
    seconds = int(age.total_seconds())
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _through_refs(session: Callable[[], Any], run: _Run, proof: TableProof, steps: _Steps, found: Survey, *,
                  cluster: bool) -> Survey:
    """Each tag or branch keeping a key, as the policy decides: hold (kept), rewrite (the keys deleted through it),
    expire (the ref dropped: its snapshots are then expired with the others); no decision: it blocks, and the
    proof says so. Returns storage as it is afterwards."""
    name, catalog, table = format_name(run.erasure.table), run.reader.config.name, run.erasure.table
    if leftovers := sorted(r for r in run.table.metadata.refs if r.startswith(TEMPORARY_BRANCH)):
        for ref in leftovers:  # a run killed in a tag's rewrite by Spark left its temporary branch
            drop_ref(name, run.latest, ref)
        found = run.survey()
    for step in keeping_refs(run.table, run.erasure, run.keys, found):
        outcome = RefOutcome(step.ref, step.kind, step.rule.decision if step.rule else None,
                             step.rule.reason if step.rule else "no decision in lifecycle.erasure.refs",
                             step.snapshot_id, list(step.files), list(step.requests), step.snapshot_id)
        proof.refs.append(outcome)
        if step.rule is None or step.rule.decision == "hold":
            continue
        if step.rule.decision == "expire":
            run.on_progress(f"dropping {step.kind} '{step.ref}': {step.rule.reason}")
            drop_ref(name, run.latest, step.ref)
            proof.statements.append(drop_ref_sql(table, catalog, step.ref, step.kind))
            outcome.snapshot_after = None
            found = steps.done("drop_ref", (), run.survey())
            continue
        found = _rewrite_ref(session, run, proof, steps, found, step, cluster=cluster)
        outcome.snapshot_after = run.table.metadata.refs[step.ref].snapshot_id
    return found


def _rewrite_ref(session: Callable[[], Any], run: _Run, proof: TableProof, steps: _Steps, found: Survey,
                 step: RefStep, *, cluster: bool) -> Survey:
    """The keys deleted from the snapshot of ``step``'s ref as from main's (step 2), committed on the ref; then the
    ref's manifests that keep a key as a bound written again. The ref must read no key afterwards."""
    name, catalog, table, ref = format_name(run.erasure.table), run.reader.config.name, run.erasure.table, step.ref
    holding = frozenset(found.live_in(step.snapshot_id))
    if holding:
        run.on_progress(f"deleting the rows of {len(run.erasure.subjects)} subject(s) from {len(holding)} file(s) of "
                        f"{step.kind} '{ref}'")
        staged = stage_rewrite(run.table, holding, run.keys, cluster=cluster, ref=ref)
        if isinstance(staged, StagedRewrite):
            staged = commit_rewrite(name, run.latest, staged, lambda t: stage_rewrite(
                t, holding, run.keys, cluster=cluster, ref=ref), ref=ref)
        if isinstance(staged, LeftToSpark):
            statement = delete_rows(session(), table, catalog, run.keys, holding, staged, ref=ref)
        else:
            run.files.wrote_without_keys(w for f in staged.files for w in f.written)
            statement = BY_PYARROW + delete_statement(table, catalog, run.keys)
        proof.statements.append(f"{statement}\n{ref_rewrite_text(table, catalog, ref, step.kind)}")
        found = steps.done("rewrite_ref", holding, run.survey(), sizes=found.sizes)
    head = run.table.metadata.refs[ref].snapshot_id
    if found.bounded_in(head):
        revealing = frozenset(found.manifests_with_keys) & found.reach.manifests.get(head, frozenset())
        rewrite_manifests(name, run.latest, revealing, ref=ref)
        proof.statements.append(rewrite_manifests_text(table, catalog) + f" (of '{ref}')")
        found = steps.done("rewrite_manifests", revealing, run.survey(), sizes=found.sizes)
        head = run.table.metadata.refs[ref].snapshot_id
    if (still := found.live_in(head)) or found.bounded_in(head):
        raise ExecutionError(f"{name}: erasure: after the rewrite through {step.kind} '{ref}' its snapshot still "
                             f"reads {len(still)} file(s) holding a key, or manifests with a key as a bound")
    return found


def _drop_dangling(run: _Run, proof: TableProof, name: str) -> Survey:
    """Storage after the delete; a delete file holding a key that applies to no row any more (an equality
    delete keyed on the subject, once the files it served are rewritten) removed from the current snapshot."""
    found = run.survey()
    held = found.live_in(run.current)
    if held and (dropped := drop_dangling(name, run.latest, frozenset(held))):
        run.on_progress(f"removed {len(dropped)} delete file(s) that hold a key and apply to no row")
        proof.statements.append(drop_dangling_text(run.erasure.table, run.reader.config.name, dropped))
        found = run.survey()
    return found


PROOF_REREADS = 2  # fresh surveys after one found an unreadable file no snapshot reads (a write in flight)


def _prove(run: _Run, proof: TableProof) -> None:
    """A fresh listing and read of storage, independent of everything this run remembered."""
    run.on_progress("proving: reading every file under the table location again"
                    + (" (each file's metadata first: bounds, statistics, bloom filters)" if run.probe else ""))
    final = run.survey(independent=True)
    for _ in range(PROOF_REREADS):
        if not final.debris:
            break
        # an unreadable file no snapshot reads may be another writer's, caught while it was being written (and
        # committed since): a fresh read sees it whole; what is still torn is reported
        run.on_progress(f"reading again: {len(final.debris)} file(s) no snapshot read could not be read")
        final = run.survey(independent=True)
    proof.proof_ran = final.placement
    proof.snapshots_checked = sorted(final.reach.live)
    proof.files_scanned, proof.bytes_scanned = final.files_read, final.bytes_read
    proof.pruning = final.pruning
    proof.rows_after = final.rows
    proof.files_still_referenced = sorted(final.referenced)
    proof.files_still_stored = sorted(set(final.held) & final.stored.keys())
    proof.manifests_scanned, proof.manifests_with_keys = final.manifests_read, final.manifests_with_keys
    proof.unreadable = list(final.unreadable)
    holds = {h.ref for h in run.erasure.holds}
    for ref, ids in kept_by_refs(run.table, holds).items():
        files = sorted(set().union(*(final.live_in(i) for i in ids))
                       | {m for i in ids for m in final.reach.manifests.get(i, ())} & set(final.manifests_with_keys))
        if files and ref in holds:
            proof.held_by[ref] = files
        elif files:
            proof.blocking_refs.append(ref)


def _preview(reader: CatalogReader, erasure: TableErasure, catalog: str, master: str, cluster_above: int,
             prune: bool) -> ErasurePreview:
    run = _Run(reader, erasure, lambda _m: None, prune=prune)
    found = run.survey()
    current = found.live_in(run.current)
    through = keeping_refs(run.table, erasure, run.keys, found)
    expirable = run.expirable(found, frozenset(erasure.decided("rewrite") | erasure.decided("expire")))
    statements = []
    if current:
        statements.append(f"-- the keys of {len(erasure.subjects)} subject(s), as data: temporary view "
                          f"tablepolicy_erasure_keys ({', '.join(c.alias for c in run.keys.columns)})")
        statements.append(delete_statement(erasure.table, catalog, run.keys))
        statements.append("-- only if a file behind a delete file still holds a key (merge-on-read):\n"
                          + rewrite_sql(erasure.table, catalog))
    if found.bounded_in(run.current):
        statements.append("-- the current snapshot's manifests keep a key as a column bound:\n"
                          + rewrite_manifests_text(erasure.table, catalog))
    for step in through:
        if step.rule is not None and step.rule.decision == "expire":
            statements.append(drop_ref_sql(erasure.table, catalog, step.ref, step.kind))
        elif step.rule is not None and step.rule.decision == "rewrite":
            statements.append(delete_statement(erasure.table, catalog, run.keys) + "\n"
                              + ref_rewrite_text(erasure.table, catalog, step.ref, step.kind))
    if expirable:
        statements.append(expire_text(erasure.table, catalog, [s.snapshot_id for s in expirable]))
    holds = {h.ref for h in erasure.holds}
    kept = {ref: tuple(sorted(set().union(*(found.live_in(i) for i in ids))))
            for ref, ids in kept_by_refs(run.table, holds).items()}
    return ErasurePreview(
        table=erasure.table, files=tuple(sorted(found.held)), rows=found.rows, files_current=tuple(sorted(current)),
        rows_current=sum(found.held[f].rows for f in current), expire=tuple(expirable),
        orphans=tuple(found.orphans), held={r: f for r, f in kept.items() if f and r in holds},
        blocking_refs=tuple(s.ref for s in through if s.rule is None), unreadable=found.unreadable,
        statements=tuple(statements), through_refs=tuple(through),
        cost=_cost(found, current, placement(master, sum(found.sizes.values()), cluster_above), master))


def _cost(found: Survey, current: set[str], reads: Placement, master: str) -> ErasureCost:
    """What the run will read (the survey's pruning, as the dry run's own survey decided) and rewrite, and where."""
    rewritten = sum(found.sizes.get(path, 0) for path in current)
    pruning = found.pruning
    return ErasureCost(
        files_listed=found.files_read, bytes_listed=found.bytes_read, files_read=pruning.files_read,
        bytes_read=pruning.bytes_read, pruned=pruning.enabled,
        excluded=tuple((str(e), pruning.files.get(e, 0), pruning.bytes.get(e, 0)) for e in SKIPPED),
        files_rewritten=len(current), bytes_rewritten=rewritten, files_deleted=len(found.orphans),
        bytes_deleted=sum(found.sizes.get(path, 0) for path in found.orphans), reads=reads,
        rewrite=rewrite_placement(master, rewritten))
