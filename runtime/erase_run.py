"""erase and erase_status: requests file -> the tables they reach -> the ledger -> Spark -> proof and certificate.

The ledger (runtime/ledger.py) says which (request, table) pairs an earlier run erased and proved: a run skips
them, records every pair it starts as pending, and each table's outcome with its proof as soon as that table is
done. ``erase_status`` reads only the ledger and the catalog (no JVM). What a run decides and does is told to the
``progress`` callback as tablepolicy.events values, so the CLI shows it while the run goes on.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tablepolicy.compiler.diagnostics import Diagnostic, Diagnostics, Location, Severity
from tablepolicy.compiler.erasure.batching import Batch, batched
from tablepolicy.compiler.erasure.ledger import (
    Entry,
    RequestStatus,
    State,
    outstanding,
    planned_entries,
    statuses,
    subject_entries,
)
from tablepolicy.compiler.erasure.plan import ErasurePreview, TableErasure, erasure_plan
from tablepolicy.compiler.erasure.requests import (
    LoadedRequests,
    date_findings,
    load_requests,
    requests_format,
    sniffed_format,
)
from tablepolicy.compiler.errors import PolicyError, TablePolicyError
from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.loader import Project, display_path

from .caches.folder import cache_dir
from .erasure.proof import ProofState, TableProof
from .events import ErasureDecided, ErasureProgress, LedgerNote, ProgressCallback, TableErased
from .target import Target

if TYPE_CHECKING:
    from tablepolicy.compiler.catalog.config import CatalogConfig
    from tablepolicy.compiler.paths import ProjectPaths

    from .catalog.reader import CatalogReader
    from .lake_ledger import LakeLedger
    from .ledger import Ledger
    from .request_table import Scrubbed
    from .spark.session import SessionOnDemand


STDIN = Path("-")


@dataclass(frozen=True)
class RequestSource:
    """Where a run reads its requests: a file outside any git work tree, standard input (``-``), or a request
    table in the target catalog (compiler/erasure/request_table.py). Personal data never comes from git."""

    file: Path | None = None
    table: str | None = None
    stdin: Callable[[], str] | None = None  # standard input's text (the CLI's; default sys.stdin)

    def __post_init__(self) -> None:
        if (self.file is None) == (self.table is None):
            raise TablePolicyError("give the requests with exactly one of --requests FILE (or - for standard "
                                   "input) and --requests-table NAMESPACE.TABLE")

    @property
    def name(self) -> str:
        if self.table is not None:
            return self.table
        return "<stdin>" if self.file == STDIN else display_path(self.file)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Reached:
    """A requests file checked against the policies and the catalog: the tables each request reaches."""

    requests: LoadedRequests
    tables: list[TableErasure]
    debris_ages: dict[tuple[str, ...], timedelta]  # table -> its lifecycle.orphan_files.older_than, if declared
    findings: Diagnostics  # warnings: a request listed twice alike
    source: RequestSource | None = None


@dataclass(frozen=True)
class ErasedTable:
    """One table's erasure: its proof, the ledger entries recorded for it, and the proof document as recorded
    (no key value in it)."""

    proof: TableProof
    entries: tuple[Entry, ...]
    document: dict[str, Any]


@dataclass(frozen=True)
class ErasureOutcome:
    """What a run of ``erase`` found and did. ``tables``: each table erased (empty in a dry run);
    ``skipped``: the (request, table) pairs the ledger had done before; ``certificate``: each pair's status."""

    target: Target
    reached: Reached
    todo: tuple[TableErasure, ...]
    skipped: tuple[Entry, ...]
    tables: tuple[ErasedTable, ...]
    certificate: tuple[RequestStatus, ...]
    today: date
    dry_run: bool
    request_store: Scrubbed | None = None  # the request table erased of the keys of the requests done
    held: tuple[TableErasure, ...] = ()  # tables whose pending requests wait for batching (not erased this run)
    batches: tuple[Batch, ...] = ()  # per table erased: the requests due and those batched with them
    previews: tuple[ErasurePreview, ...] = ()  # a dry run's: what holds the keys, the statements, the cost

    @property
    def complete(self) -> bool:
        """Every table erased and proven, or held by a declared legal hold."""
        return all(t.proof.state in (ProofState.COMPLETE, ProofState.HELD) for t in self.tables)


@dataclass(frozen=True)
class ErasureStatus:
    """Each request the ledger knows (or the requests file names) on the selected tables, as of ``today``."""

    target: Target
    statuses: tuple[RequestStatus, ...]
    today: date
    ledger: str  # where the ledger is kept ("catalog database" or its file)
    note: str | None  # why the ledger is not kept with the catalog, when it is not

    @property
    def overdue(self) -> bool:
        return any(s.overdue(self.today) for s in self.statuses)


def cluster_above(text: str, flag: str = "--cluster-above") -> int:
    """A size as the policies write them (512MB, 10GiB), in bytes: the threshold above which a cluster reads."""
    from tablepolicy.compiler.policy.units import Size

    try:
        size = Size.parse(text)
    except ValueError as exc:
        raise TablePolicyError(f"{flag}: {exc}; {Size.HINT}") from None
    if not size.bytes:
        raise TablePolicyError(f"{flag}: size '{text}' is zero: write 1B to read every table on the cluster")
    return size.bytes


def debris_min_age(text: str, flag: str = "--debris-min-age") -> timedelta:
    """A duration as the policies write them (0s, 1h, 3d)."""
    from tablepolicy.compiler.policy.units import Duration

    try:
        return timedelta(milliseconds=Duration.parse(text).millis)
    except ValueError as exc:
        raise TablePolicyError(f"{flag}: {exc}") from None


def read_requests(project: Project, source: RequestSource | Path, reader: CatalogReader, today: date | None
                  ) -> Reached:
    """Read the requests (a file: format by extension; standard input: by its first line; a request table: its
    pending rows) and plan them on the project's tables; every finding raises at once, before anything is
    erased or recorded. ``today``: the run's day, after which no request can have arrived (TP616); None for
    ``erase status``, which only shows them."""
    if isinstance(source, Path):
        source = RequestSource(file=source)
    if source.table is not None:
        from .request_table import read_table, table_name

        found = read_table(reader.catalog, table_name(source.table))
        if found.loaded is None:
            raise PolicyError(found.findings)
        requests, diagnostics = found.loaded, found.findings
    else:
        requests, diagnostics = _read_file(source)
    dated = date_findings(requests, today) if today is not None else Diagnostics()
    if dated.has_errors:
        raise PolicyError(dated)
    states = {t.name: current.state for t in project.tables if (current := reader.table(t.name)) is not None}
    tables, findings = erasure_plan(project, requests, states)
    if findings.has_errors:
        raise PolicyError(findings)
    return Reached(requests, tables, _debris_ages(project), diagnostics, source)


def _read_file(source: RequestSource) -> tuple[LoadedRequests, Diagnostics]:
    """A requests file, refused inside a git work tree (TP618), or standard input."""
    name = source.name
    if source.file == STDIN:
        import sys

        text = source.stdin() if source.stdin is not None else sys.stdin.read()
        requests, diagnostics = load_requests(text, name, sniffed_format(text))
    else:
        assert source.file is not None
        kind = requests_format(name)
        if isinstance(kind, Diagnostic):
            raise PolicyError(Diagnostics([kind]))
        refused = in_git_finding(source.file)
        if refused is not None:
            raise PolicyError(Diagnostics([refused]))
        try:
            text = source.file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise TablePolicyError(f"--requests {name}: it is not UTF-8 text; save it as UTF-8") from None
        except OSError as exc:
            raise TablePolicyError(f"--requests {name}: cannot read it ({(exc.strerror or 'unreadable').lower()}); "
                                   "give the path of a readable requests file") from None
        requests, diagnostics = load_requests(text, name)
    if requests is None:
        raise PolicyError(diagnostics)
    return requests, diagnostics


def in_git_finding(file: Path) -> Diagnostic | None:
    """TP618 when ``file`` lies in a git work tree: its raw key values are one ``git add`` away from a history
    that no erasure reaches (every clone and fork keeps it)."""
    from .gitinfo import work_tree

    root = work_tree(file.parent if file.parent != Path("") else Path("."))
    if root is None:
        return None
    name = display_path(file)
    inside = file.resolve().relative_to(root)
    return Diagnostic(
        "TP618", Severity.ERROR, Location(name),
        f"requests file {name} is inside the git work tree {root}: the key values it holds would enter git "
        "history, which no erasure reaches",
        f"move it out of the repository, pipe it (erase --requests - < FILE), or append the requests to the request "
        f"table (erase --requests-table privacy.erasure_requests); if it was ever committed, purge it from history: "
        f"git filter-repo --path {inside} --invert-paths")


def _debris_ages(project: Project) -> dict[tuple[str, ...], timedelta]:
    """The orphan guard each table declares: erase keeps unreadable unreferenced files younger than it."""
    from tablepolicy.compiler.effective import effective_settings

    ages = {}
    for table in project.tables:
        orphans = effective_settings(project, table).lifecycle.orphan_files
        if orphans is not None and orphans.older_than is not None:
            ages[table.name] = timedelta(milliseconds=orphans.older_than.millis)
    return ages


def erase(
    paths: ProjectPaths, requests_file: RequestSource | Path, chosen: Target, project: Project, *, dry_run: bool,
    spark: Mapping[str, Any], now: datetime, debris_age: timedelta | None, progress: ProgressCallback,
    prune: bool = True, cluster_above: int | None = None,
) -> ErasureOutcome:
    """The body of tablepolicy.erase (tablepolicy/api.py checks the arguments and finds the project)."""
    from .catalog.reader import CatalogReader
    from .ledger import new_salt, now_utc, opened_ledger

    config = chosen.catalog
    with CatalogReader(config, create=False) as reader:
        today = now.date()
        reached = read_requests(project, requests_file, reader, today)  # every finding before the ledger is touched
        with opened_ledger(reader, cache_dir(paths), create=not dry_run) as ledger:
            if ledger.note:
                progress(LedgerNote(ledger.note))
            todo = outstanding(reached.tables, ledger.entries(format_name(t.table) for t in reached.tables),
                               reached.requests)
            if todo.findings.has_errors:
                raise PolicyError(todo.findings)
            batching = batched(todo.tables, today)  # tables whose requests are all held wait for a later run
            todo = dataclasses.replace(todo, tables=batching.run)
            session = None
            if todo.tables and not dry_run:  # started only if a step needs Spark (runtime/erasure/commits.py)
                from .spark.session import SessionOnDemand, SparkOptions

                session = SessionOnDemand(config, SparkOptions.from_flags(spark["master"], spark["conf"]))
            previews: tuple[ErasurePreview, ...] = ()
            warnings: list[str] = []
            if dry_run and todo.tables:  # what holds the keys and every statement a run starts with, no JVM
                from .erase import preview_erasure

                previews = tuple(preview_erasure(todo.tables, config, warnings.append, master=spark["master"],
                                                 cluster_above=cluster_above, prune=prune))
            progress(ErasureDecided(tuple(reached.tables), tuple(todo.tables), tuple(todo.done), today, dry_run,
                                    previews, tuple(warnings), reached.findings, tuple(batching.held)))
            erased: list[ErasedTable] = []
            if not dry_run and session is not None:
                received = {r.id: r.received for r in reached.requests.model.requests}
                salt = new_salt()
                pending = [e for t in todo.tables for e in subject_entries(t, received, State.PENDING, salt)]
                ledger.record_pending(pending, now_utc())
                for table in todo.tables:
                    age = debris_age if debris_age is not None else reached.debris_ages.get(table.table)
                    done = _erase_table(table, config, ledger, received, salt, paths, session, now, age, progress,
                                        cluster_above, prune=prune)
                    erased.append(done)
                    progress(TableErased(done.proof, done.entries, done.document))
            entries = [*todo.done, *(e for t in erased for e in t.entries)]
            certificate = tuple(statuses(entries))
            store = None
            if reached.source is not None and reached.source.table is not None and not dry_run:
                store = _erase_request_store(reader, reached.source.table, entries, certificate, progress)
    return ErasureOutcome(chosen, reached, tuple(todo.tables), tuple(todo.done), tuple(erased),
                          certificate, today, dry_run, store, tuple(batching.held), batching.batches, previews)


def _erase_request_store(reader: CatalogReader, table: str, entries: list[Entry],
                         certificate: tuple[RequestStatus, ...], progress: ProgressCallback) -> Scrubbed | None:
    """Once requests are done and proven on every table they reach, their keys leave the request table: each
    row keeps the ledger's fingerprint (the first table's, in name order), and the table's history is expired."""
    from .request_table import scrub, table_name

    done = {s.request for s in certificate if s.state == State.DONE}
    fingerprints: dict[str, str] = {}
    for entry in sorted(entries, key=lambda e: e.table):
        if entry.request in done and entry.fingerprint:
            fingerprints.setdefault(entry.request, entry.fingerprint)
    if not fingerprints:
        return None
    return scrub(reader.catalog, table_name(table), fingerprints,
                 lambda message: progress(ErasureProgress(message)))


def _erase_table(
    table: TableErasure, config: CatalogConfig, ledger: Ledger | LakeLedger, received: dict[str, date], salt: str,
    paths: ProjectPaths, session: SessionOnDemand, started: datetime, debris_age: timedelta | None,
    progress: ProgressCallback, cluster_above: int | None = None, *, prune: bool = True,
) -> ErasedTable:
    """Erase one table and record its outcome at once: a run stopped later keeps what this table achieved.
    ``debris_age``: the table's debris guard (None: Iceberg's 3-day orphan default). ``cluster_above``: the
    --cluster-above threshold, over the table's lifecycle.erasure.cluster_above."""
    from .erase import run_erasure
    from .erasure.leftovers import DEBRIS_MIN_AGE
    from .ledger import now_utc

    (proof,) = run_erasure([table], config, session.options, lock_dir=cache_dir(paths),
                           on_progress=lambda message: progress(ErasureProgress(message)), session=session,
                           now=started, debris_min_age=DEBRIS_MIN_AGE if debris_age is None else debris_age,
                           cluster_above=cluster_above, prune=prune)
    state = State.DONE if proof.complete else State.HELD if proof.state is ProofState.HELD else State.FAILED
    now = now_utc()
    document = scrubbed(proof.as_json(), table)
    entries = subject_entries(table, received, state, salt)
    ledger.record(entries, document, now)
    recorded = tuple(Entry(e.request, e.table, e.received, e.deadline, e.state, e.fingerprint, document, now,
                           now if state == State.DONE else None) for e in entries)
    return ErasedTable(proof, recorded, document)


def proof_document(outcome: ErasureOutcome, erased_at: datetime) -> str:
    """The proof file of a run (``erase --proof``): no key value in it."""
    from tablepolicy.compiler.render.erasure_report import proof_json

    ids = [r.id for r in outcome.reached.requests.model.requests]
    return proof_json(outcome.target.catalog.summary(), erased_at, ids, [t.document for t in outcome.tables],
                      list(outcome.skipped), list(outcome.certificate), outcome.today,
                      [b.as_json() for b in outcome.batches])


def erase_status(paths: ProjectPaths, chosen: Target, project: Project, requests_file: RequestSource | Path | None,
                 today: date) -> ErasureStatus:
    """The body of tablepolicy.erase_status."""
    from .catalog.reader import CatalogReader
    from .ledger import opened_ledger

    with CatalogReader(chosen.catalog, create=False) as reader, \
            opened_ledger(reader, cache_dir(paths), create=False) as ledger:
        if requests_file is not None:
            reached = read_requests(project, requests_file, reader, None)
            recorded = ledger.entries([format_name(t.table) for t in reached.tables])
            received = {r.id: r.received for r in reached.requests.model.requests}
            entries = [_with_run_day(recorded.get((e.request, e.table)), e)
                       for e in planned_entries(reached.tables, received)]
        else:
            entries = list(ledger.entries(format_name(t.name) for t in project.tables).values())
        return ErasureStatus(chosen, tuple(statuses(entries)), today, ledger.where, ledger.note)


def _with_run_day(recorded: Entry | None, planned: Entry) -> Entry:
    """The ledger's entry when it has one (a pending one keeps the planned day a run erases it)."""
    if recorded is None:
        return planned
    return dataclasses.replace(recorded, runs_on=planned.runs_on) if recorded.state == State.PENDING else recorded


def mask_value(text: str, value: str) -> str:
    """``text`` with ``value`` masked wherever it stands as a value: a word-like value (``u1``, ``_``) only as a
    whole word, so it is not masked inside identifiers (``vals.values_spark``) or longer values; any other
    value wherever it occurs (masking too much is safe, too little is not)."""
    if re.fullmatch(r"\w+", value):
        return re.sub(rf"(?<!\w){re.escape(value)}(?!\w)", "***", text)
    return text.replace(value, "***")


def scrubbed(proof: dict[str, Any], table: TableErasure) -> dict[str, Any]:
    """The proof with no key value in it: an error's statement (which holds the keys) is cut, and any value
    Spark quoted in its first line is masked."""
    message = proof.get("error")
    if message:
        message = str(message).split("\n", 1)[0]
        for value in sorted({str(v) for s in table.subjects for v in s.values}, key=len, reverse=True):
            message = mask_value(message, value)
        proof = {**proof, "error": message + " (statement withheld: it holds key values)"}
    return proof
