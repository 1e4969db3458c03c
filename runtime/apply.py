"""apply: a reviewed plan -> Spark SQL, step by step, refusing stale or unapproved plans, resumable.

Order of work, every check before Spark starts: origin (the tool version that wrote the plan, the
catalog it was made against) -> requirements (every table as planned, same UUID, unless this plan
already started on it) -> the plan derived now from the reviewed policies and the catalog must hold
exactly the saved changes, all approved -> locks -> one Spark session -> steps, each journaled durably; a
killed run is re-run and skips what is done, checking the live table for the step that may have run just
before the kill.
"""

from __future__ import annotations

import getpass
import os
import socket
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.diff import changes
from tablepolicy.compiler.diff.changes import Change
from tablepolicy.compiler.diff.refs import SAFETY_TAG_PREFIX
from tablepolicy.compiler.errors import PolicyError, TablePolicyError
from tablepolicy.compiler.iceberg.names import format_name
from tablepolicy.compiler.model.properties import STAMP_KEYS
from tablepolicy.compiler.model.view import CurrentView
from tablepolicy.compiler.paths import ProjectPath, ProjectPaths
from tablepolicy.compiler.plan.applied import is_applied
from tablepolicy.compiler.plan.model import CatalogRef, Plan, Requirement
from tablepolicy.compiler.plan.planner import make_plan, requirement_of
from tablepolicy.compiler.plan.steps import Step, plan_id_of, plan_steps
from tablepolicy.compiler.plan.verify import check_origin, compare
from tablepolicy.compiler.project import find_project, load_selected
from tablepolicy.compiler.sql.filters import ident, literal, qualified

from .catalog.reader import CatalogReader, read_metadata
from .executor import case_sensitive, create_tag, prepare, with_commit_retries
from .forked import FORKED
from .invocation import Invocation
from .journal import Journal
from .lock import catalog_locks
from .redaction import register
from .spark.catalog_conf import on_object_storage
from .spark.session import SparkOptions, start_in_background

if TYPE_CHECKING:
    from tablepolicy.compiler.diagnostics import Diagnostics
    from tablepolicy.compiler.overlay import OverlayFile

TAG_RETAIN_DAYS = 7
# changes to objects plan_steps does not stamp with the plan id: only the journal tells a re-run they were its own
VIEW_CHANGES = (changes.CreateView, changes.ReplaceView, changes.UnsetViewProperties, changes.DropView)
UNSTAMPED = (*VIEW_CHANGES, changes.DropTable)
# what a plan depends on, by Requirement field; a data commit changes none of them
STALE_IF_CHANGED = {"schema_id": "schema id", "spec_id": "spec id", "sort_order_id": "sort order id",
                    "format_version": "format version", "properties_digest": "table properties changed",
                    "refs_digest": "branches or tags changed"}


class StalePlanError(TablePolicyError):
    """The catalog changed since the plan was made: plan again and review."""


class PlanMismatchError(TablePolicyError):
    """The plan file is not what the reviewed policies and the catalog give now (edited, another catalog,
    another tool version, or unapproved): nothing runs."""


class StepStatus(StrEnum):
    """What became of one step; the value is what the progress lines and the JSON report say."""

    DONE = "done"
    JOURNALED = "skipped (journal)"  # an earlier run of this plan journaled it
    ALREADY_APPLIED = "skipped (already applied)"  # a killed run did it just before journaling


@dataclass
class StepResult:
    step: Step
    status: StepStatus
    seconds: float = 0.0


@dataclass
class ApplyReport:
    plan_id: str
    results: list[StepResult] = field(default_factory=list)
    safety_tags: list[str] = field(default_factory=list)

    @property
    def executed(self) -> int:
        return sum(1 for r in self.results if r.status is StepStatus.DONE)


def check_against_policies(plan: Plan, reader: CatalogReader, policies: ProjectPath | None,
                           in_progress: set[tuple[str, ...]], environment: str | None = None, *,
                           overlay_read: tuple[OverlayFile, Diagnostics] | None = None) -> None:
    """The saved plan must be exactly the plan derived now from the policies in git and the catalog, with
    every destructive change approved there, whatever the plan file says. ``overlay_read``: the environment's
    overlay as the run's front door read it (not read again)."""
    paths = find_project(policies) if policies is not None else None
    if paths is None or not paths.scope.exists():
        raise PlanMismatchError(f"cannot check the plan against the policies: {shown(policies)} does not exist; "
                                "pass --policies with the reviewed policies the plan was made from; nothing was "
                                "applied")
    # the whole project the path belongs to (namespace defaults above a subfolder included); the plan's own
    # selection, if any, restricts the comparison
    project, _, diagnostics = load_selected(paths.scope, environment=environment,
                                            environment_flag="the plan's environment", workers=FORKED,
                                            overlay_read=overlay_read)
    if diagnostics.has_errors:
        raise PolicyError(diagnostics)
    derived = make_plan(project, reader, plan.catalog_ref, today=datetime.now(UTC).date(), workers=FORKED)
    if derived.refused:
        raise PolicyError(derived.diagnostics)
    existing = {c.table for c in plan.namespaces if reader.namespace_exists(c.table)}
    problems = compare(plan, derived.plan, in_progress, existing)
    if problems:
        raise PlanMismatchError(f"the plan file is not what the policies in {shown(policies)} and the catalog give "
                                "now, "
                                "nothing was applied:\n  " + "\n  ".join(problems)
                                + "\nrun tablepolicy plan again and review the new plan")


def check_requirements(plan: Plan, reader: CatalogReader, plan_id: str, resumed: set[tuple[str, ...]]) -> set[
        tuple[str, ...]]:
    """Refuse the whole apply if any table moved since planning; return the tables this plan already
    started on (stamped with its id, or journaled), whose requirements are its own earlier steps."""
    stale = []
    in_progress = set(resumed)
    for table in plan.tables:
        if not table.changes:
            continue
        want = table.requirement
        name = format_name(table.table)
        if table.kind == "view":
            if table.table not in in_progress:
                stale += _stale_view(name, want, reader.view(table.table))
            continue
        current = reader.table(table.table)
        if current is not None and current.state.properties.get("tablepolicy.plan-id") == plan_id:
            in_progress.add(table.table)
        if table.table in in_progress:
            continue
        if not want.exists and current is not None:
            stale.append(f"{name}: planned as new, but it exists now")
        elif want.exists and current is None:
            stale.append(f"{name}: it was dropped since the plan was made")
        elif current is not None and current.uuid != want.uuid:
            stale.append(f"{name}: dropped and re-created since the plan was made (table UUID {want.uuid} -> "
                         f"{current.uuid})")
        elif current is not None and current.metadata_location != want.metadata_location:
            now = requirement_of(current)
            named = _changed_names(reader, want.metadata_location, current.metadata_location)
            changed = [
                f"{label} {getattr(want, key)} -> {getattr(now, key)}" if not key.endswith("_digest")
                else label + (f": {named[key]}" if named.get(key) else "")
                for key, label in STALE_IF_CHANGED.items()
                if getattr(want, key) != getattr(now, key)
            ]
            if changed:  # data commits alone (running writers) leave all of these as planned
                stale.append(f"{name}: changed since the plan was made ({', '.join(changed)})")
    if stale:
        raise StalePlanError("plan is stale, nothing was applied:\n  " + "\n  ".join(stale)
                             + "\nrun tablepolicy plan again and review the new plan")
    return in_progress


def _changed_names(reader: CatalogReader, planned: str | None, now: str | None) -> dict[str, str]:
    """Which property keys and which branches or tags differ between the metadata file the plan was made against
    and the current one (read from storage: a plan records only digests of them); {} when either cannot be read."""
    if planned is None or now is None:
        return {}
    try:
        before, after = read_metadata(reader.catalog, planned), read_metadata(reader.catalog, now)
    except Exception:  # an expired or unreadable old metadata file: the digest alone is reported
        return {}
    names: dict[str, str] = {}
    old, new = before.get("properties") or {}, after.get("properties") or {}
    keys = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k) and k not in STAMP_KEYS)
    if keys:
        names["properties_digest"] = ", ".join(
            f"{k} {_shown(old.get(k))} -> {_shown(new.get(k))}" for k in keys)
    refs_before = {n: r.get("type") for n, r in (before.get("refs") or {}).items() if n != "main"}
    refs_after = {n: r.get("type") for n, r in (after.get("refs") or {}).items() if n != "main"}
    moved = sorted(n for n in refs_before.keys() | refs_after.keys() if refs_before.get(n) != refs_after.get(n))
    if moved:
        how = {n: "added" if n not in refs_before else "removed" if n not in refs_after else "changed" for n in moved}
        names["refs_digest"] = ", ".join(f"{n} {what}" for n, what in how.items())
    return names


def _shown(value: object) -> str:
    return "(unset)" if value is None else repr(str(value)) if len(str(value)) <= 40 else "(a long value)"


def _stale_view(name: str, want: Requirement, current: CurrentView | None) -> list[str]:
    """Why a view's plan is stale: it appeared, went, or has a new version since the plan was made."""
    if not want.exists and current is not None:
        return [f"view {name}: planned as new, but it exists now"]
    if want.exists and current is None:
        return [f"view {name}: it was dropped since the plan was made"]
    if current is not None and current.metadata_location != want.metadata_location:
        return [f"view {name}: replaced since the plan was made (version {current.version_id} now)"]
    return []


def shown(policies: ProjectPath | None) -> str:
    """The policies as the user named them."""
    return str(policies.selected if isinstance(policies, ProjectPaths) else policies)


def apply_plan(
    plan: Plan,
    catalog: CatalogConfig,
    options: SparkOptions,
    *,
    journal_path: Path,
    policies: ProjectPath | None = None,
    invocation: Invocation | None = None,
    verify: bool = True,
    environment: str | None = None,
    session: Future[Any] | None = None,
    on_result: Callable[[StepResult], None] = lambda _r: None,
    on_notice: Callable[[str], None] = lambda _m: None,
) -> ApplyReport:
    """``verify``: check the plan against the plan derived now from ``policies`` (a saved plan; a plan just
    derived from them needs no second derivation). ``session``: a Spark session already starting (see
    start_in_background); else one is started here once the locks are taken and every check has passed.
    ``invocation``: the run's front door, resolved once (its project and environment stand for ``policies``
    and ``environment``, its overlay is not read again)."""
    overlay_read = None
    if invocation is not None:
        policies, environment = invocation.project, invocation.environment
        overlay_read = invocation.target.overlay_read
    register(catalog)  # a step's error is masked with this catalog's secrets (runtime/redaction.py)
    plan_id = plan_id_of(plan)
    report = ApplyReport(plan_id)
    steps = plan_steps(plan, plan_id, applier())
    if not steps:
        return report
    problems = check_origin(plan, CatalogRef.of(catalog), environment)
    if problems:
        tables = ", ".join(format_name(t.table) for t in plan.tables if t.changes) or "namespaces only"
        raise PlanMismatchError(f"refusing the plan of {tables}, nothing was applied:\n  " + "\n  ".join(problems)
                                + "\nrun tablepolicy plan again against this catalog with this tablepolicy")
    journal = Journal(journal_path, plan_id)
    done = journal.completed()
    journaled_tables = {s.change.table for s in steps if s.index in done}
    with CatalogReader(catalog) as reader:
        # the lock names and folder maintain and erase use, so a catalog without a database shares its locks too
        lock_dir = find_project(policies).root / ".tablepolicy" if policies is not None else journal_path.parent
        # locked before the plan is checked: a table another run is changing is refused as locked (who, since
        # when, how to take over), not as a stale plan, and nothing changes it between the checks and the steps
        with catalog_locks(reader, [format_name(t.table) for t in plan.tables if t.changes], lock_dir):
            in_progress = check_requirements(plan, reader, plan_id, journaled_tables)
            if verify:
                check_against_policies(plan, reader, policies, in_progress, environment, overlay_read=overlay_read)
            if any(on_object_storage(t.requirement.metadata_location or "") for t in plan.tables):
                options = replace(options, object_storage=True)  # a table it changes is on S3
            # a plan this catalog already holds (re-run after it finished, here or on another runner): every step
            # is journaled or found applied, and Spark is never started for nothing
            idle = _Run(None, reader, journal, done, in_progress, report, on_notice, {})
            if all(step.index in done or idle.found_applied(step.change) for step in steps):
                with journal.appending():
                    for step in steps:
                        result = idle.step(step)
                        report.results.append(result)
                        on_result(result)
                return report
            session = session or start_in_background(catalog, options)
            spark = session.result()
            # each step prepared once (parsed, its API request built), all before any runs: nothing runs unless
            # every step can
            ready = {step.index: prepare(spark, catalog.name, step.change, step.sql, _what(step)) for step in steps}
            # names resolve case-sensitively for every step: set once for the run, restored after
            with case_sensitive(spark), journal.appending():
                run = _Run(spark, reader, journal, done, in_progress, report, on_notice, ready)
                for step in steps:
                    result = run.step(step)
                    report.results.append(result)
                    on_result(result)
    return report


def applier() -> str:
    """Who runs this apply, stamped on each table it changes (``tablepolicy history`` shows it): the GitHub actor
    in a workflow, else the user and host."""
    if actor := os.environ.get("GITHUB_ACTOR"):
        return f"github:{actor}"
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container's)
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()}"


def _what(step: Step) -> str:
    return f"step {step.index} ({step.summary})"


@dataclass
class _Run:
    """The state of one apply run while it walks the steps."""

    spark: Any
    reader: CatalogReader
    journal: Journal
    done: set[int]  # step indices journaled by earlier runs of this plan
    in_progress: set[tuple[str, ...]]  # tables an earlier run of this plan already changed
    report: ApplyReport
    on_notice: Callable[[str], None]
    ready: dict[int, Callable[[], None]]  # by step index: what runs the prepared step
    tagged: set[tuple[str, ...]] = field(default_factory=set)
    # the SQLite catalogs' connection pools renewed since Spark last loaded its catalog plugins: a step's first
    # attempt need not ask the JVM again (a retry drops the plugins, and renews)
    renewed: bool = False

    def step(self, step: Step) -> StepResult:
        change = step.change
        if step.index in self.done:
            return StepResult(step, StepStatus.JOURNALED)
        if self.found_applied(change):  # a killed run did it just before journaling
            self._journal(step)
            return StepResult(step, StepStatus.ALREADY_APPLIED)
        if isinstance(change, changes.DropColumn | changes.DropTable) and change.table not in self.tagged:
            self.tagged.add(change.table)
            self._safety_tag(step)
        started = time.perf_counter()
        self._execute(step)
        self._journal(step)
        return StepResult(step, StepStatus.DONE, time.perf_counter() - started)

    def found_applied(self, change: Change) -> bool:
        """A change of a table this plan already started on (or a namespace) that the catalog holds already."""
        resumable = change.table in self.in_progress or change.action == "create_namespace"
        return resumable and self._applied(change)

    def _journal(self, step: Step) -> None:
        """Record the step (flushed: a killed run loses nothing). A step on a table this plan stamps is told done
        by the catalog too (a re-run finds the stamp and checks each step against the live table), so its line is
        made durable with the others at the end of the run, one fsync; the journal alone tells that a view's
        change or a drop was this plan's (a re-run would refuse the plan as stale), so that line is fsynced now."""
        self.journal.record(step.index, step.summary)
        if isinstance(step.change, UNSTAMPED):
            self.journal.sync()

    def _applied(self, change: Change) -> bool:
        if change.action == "create_namespace":
            return is_applied(change, None, self.reader.namespace_exists(change.table))
        if isinstance(change, VIEW_CHANGES):
            view = self.reader.view(change.table)
            return is_applied(change, view.state if view else None)
        current = self.reader.table(change.table, fresh=True)
        return is_applied(change, current.state if current else None)

    def _execute(self, step: Step) -> None:
        """Run the prepared step, retrying a commit that lost a race with another writer."""
        renewed, self.renewed = self.renewed, True  # a returning call's last attempt ran on renewed pools...
        with_commit_retries(self.spark, self.ready[step.index], landed=lambda: self._landed(step.change),
                            renewed=renewed)

    def _landed(self, change: Change) -> bool:
        """Asked after a failed attempt dropped Spark's catalog plugins: ...unless the step is found landed, and
        no attempt follows to load the plugins afresh and renew their pools: then the next step renews them."""
        applied = self._applied(change)
        self.renewed = not applied
        return applied

    def _safety_tag(self, step: Step) -> None:
        """Tag the current snapshot before a destructive step and say how to get back."""
        current = self.reader.table(step.change.table, fresh=True)
        snapshot = current.snapshot_id if current else None
        if snapshot is None:
            return  # an empty table has nothing to lose
        tag = f"{SAFETY_TAG_PREFIX}{self.report.plan_id[:8]}"
        catalog = self.reader.config.name
        table = qualified((catalog, *step.change.table))
        create_tag(self.spark, table, tag, snapshot, TAG_RETAIN_DAYS, f"safety tag before step {step.index}")
        note = (f"tagged snapshot {snapshot} of {format_name(step.change.table)} as '{tag}' (kept {TAG_RETAIN_DAYS} "
                f"days); to read the data as it was: SELECT * FROM {table} VERSION AS OF {literal(tag)}; to roll "
                f"the table back: CALL {ident(catalog)}.system.rollback_to_snapshot("
                f"{literal('.'.join(step.change.table))}, {snapshot})")
        self.report.safety_tags.append(note)
        self.on_notice(note)
