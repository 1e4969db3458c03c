"""Project + catalog -> Plan. Reads the catalog, never writes it; no JVM.

Illegal changes are refused as findings (nothing is half-planned); destructive changes without an
``allow_destructive`` entry in git are recorded as blocked, so the plan exits 3 and says what to write.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

from .. import codes
from ..catalog.config import CatalogConfig
from ..catalog.current import CurrentTable
from ..catalog.retention import retention_cutoff
from ..checks.view_reads import Known, creation_order, unknown_reads
from ..desired import DesiredTable, desired_table, namespaces_of
from ..diagnostics import Diagnostic, Diagnostics, Severity
from ..diff import changes
from ..diff.changes import Change, RetentionEstimate
from ..diff.create import creation_changes
from ..diff.differ import diff_table
from ..diff.refs import diff_refs
from ..diff.refusals import Refusal
from ..diff.views import broken_views, diff_view
from ..effective import namespace_chain, overlaid_settings
from ..errors import CatalogError
from ..heap import settled_heap
from ..iceberg.names import format_name, natural_key, parse_name
from ..loader import LoadedTable, LoadedView, Project
from ..model.table import TableHistory
from ..model.view import CurrentView, desired_view
from ..parallel import IN_PROCESS, Workers
from ..policy.refs import ref_name
from ..policy.units import Duration
from ..readers.check import change_of, check_changes
from ..readers.declared import any_declared
from .approvals import UNUSED_APPROVAL, consumed_in, judge, spent_at_create, unused
from .locate import column_yaml_path
from .model import (
    Blocked,
    CatalogRef,
    EnvironmentRef,
    OverlaidSetting,
    Plan,
    Requirement,
    TablePlan,
)
from .reuse import PlanCacheStore, plan_key


class StateSource(Protocol):
    def table(self, name: tuple[str, ...]) -> CurrentTable | None: ...

    def namespace_exists(self, namespace: tuple[str, ...]) -> bool: ...

    def tables_in(self, namespace: tuple[str, ...]) -> list[tuple[str, ...]]: ...

    def estimate_retention(
        self, name: tuple[str, ...], column: tuple[str, ...], cutoff: datetime
    ) -> RetentionEstimate | None: ...

    def metadata_locations(self) -> dict[tuple[str, ...], str] | None: ...

    def view(self, name: tuple[str, ...]) -> CurrentView | None: ...


@dataclass(frozen=True)
class PlanResult:
    plan: Plan
    diagnostics: Diagnostics  # refusals (errors) found while diffing

    @property
    def refused(self) -> bool:
        return self.diagnostics.has_errors


def make_plan(
    project: Project,
    source: StateSource,
    catalog: str | CatalogRef,
    git_sha: str | None = None,
    *,
    today: date,
    cache: PlanCacheStore | None = None,
    workers: Workers = IN_PROCESS,
) -> PlanResult:
    """``today`` fixes the retention cutoff (midnight UTC), so plans made the same day are identical; the runtime
    reads the clock once and passes it (the compiler reads no clock).

    With a cache and a catalog that lists metadata locations in one query, unchanged tables are not read.
    ``catalog``: the catalog as the plan file records it (a bare name records only the name). ``workers``: how
    the tables the cache cannot answer may be planned in parallel (the runtime passes forked processes).
    """
    target = catalog if isinstance(catalog, CatalogRef) else _target(catalog, source)
    catalog = target.name
    present = sorted((t for t in project.tables if t.state == "present"), key=lambda t: natural_key(t.name))
    diagnostics = Diagnostics()
    locations = source.metadata_locations() if cache is not None else None
    # created in this order: a view reading another view of the plan after it
    views = creation_order(sorted((v for v in project.views if v.state == "present"),
                                  key=lambda v: natural_key(v.name)), target.name)
    namespaces: list[Change] = [
        changes.CreateNamespace(table=ns)
        for ns in namespaces_of([*(t.name for t in present), *(v.name for v in views)])
        if not source.namespace_exists(ns)
    ]
    tables = []
    with settled_heap() as settle:
        tables = _plan_tables(project, present, source, catalog, today, diagnostics, cache, locations, settle,
                             workers)
    tables += [t for t in (_tombstone(t, source) for t in project.tables if t.state == "absent") if t]
    tables.sort(key=lambda t: natural_key(t.table))
    # views after every table: a view's SELECT is resolved when it is created, over tables this plan may create
    tables += [t for t in (_readable(v, _plan_view, source, diagnostics) for v in views) if t]
    tables += [t for t in (_readable(v, _view_tombstone, source, diagnostics) for v in project.views
                           if v.state == "absent") if t]
    declared = {t.name for t in project.tables}
    managed = ({t.name[:-1] for t in project.tables} | {v.name[:-1] for v in project.views}
               | {ns.name for ns in project.namespaces})
    unmanaged = sorted({t for ns in managed for t in source.tables_in(ns) if t not in declared}, key=natural_key)
    plan = Plan(catalog_ref=target, git_sha=git_sha, environment=environment_of(project, present),
                namespaces=namespaces, tables=tables, unmanaged=unmanaged, blocked=_blocked(project, tables))
    diagnostics.extend(unused_approvals(project, tables))
    diagnostics.extend(_breaking_for_views(views, tables))
    diagnostics.extend(_unknown_reads(project, views, tables, source, catalog))
    diagnostics.extend(_unreadable(project, tables, source))
    diagnostics.extend(_renamed_in_git(project, tables, unmanaged, source))
    return PlanResult(plan, diagnostics)


def _renamed_in_git(project: Project, tables: list[TablePlan], unmanaged: list[tuple[str, ...]],
                    source: StateSource) -> list[Diagnostic]:
    """A warning (TP470) on each table this plan creates beside an undeclared table of its namespace that an earlier
    apply stamped: most likely the same table renamed in git, whose data would stay behind in the old one."""
    created = {t.table for t in tables if t.changes and isinstance(t.changes[0], changes.CreateTable)}
    if not created or not unmanaged:
        return []
    by_namespace: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for name in unmanaged:
        by_namespace.setdefault(name[:-1], []).append(name)
    found = []
    for loaded in project.tables:
        candidates = by_namespace.get(loaded.name[:-1], []) if loaded.name in created else []
        stamped = [old for old in candidates
                   if (current := source.table(old)) is not None and "tablepolicy.plan-id" in current.state.properties]
        if stamped:
            old = ", ".join(format_name(n) for n in stamped)
            found.append(Diagnostic(
                codes.TP470, Severity.WARNING, loaded.source.value(("table",)),
                f"{format_name(loaded.name)} is created empty, and the catalog still holds {old}, which an earlier "
                "apply made and no policy declares now: if the table was renamed in git, its data stays behind",
                f"to keep the data, rename it in the catalog first (in Spark: ALTER TABLE {format_name(stamped[0])} "
                f"RENAME TO {format_name(loaded.name)}), then plan again; a new table meant to be new needs nothing"))
    return found


def _unreadable(project: Project, tables: list[TablePlan], source: StateSource) -> list[Diagnostic]:
    """Each change of this plan that a declared reader of its table cannot read (TG112) or that no source says it
    can (TG113), at the policy's line (tablepolicy.compiler.readers). Checked after every table is planned, so a
    plan answered from the cache is checked against the readers declared today."""
    if not any_declared(project):
        return []
    declared = {t.name: t for t in project.tables if t.state == "present"}
    found = []
    for plan in tables:
        table = declared.get(plan.table)
        if plan.kind != "table" or table is None or not plan.changes:
            continue
        current = source.table(plan.table) if plan.requirement.exists else None
        desired = desired_table(project, table).state
        found += check_changes(project, table, current.state if current is not None else None, desired,
                               change_of(plan.changes), column_yaml_path)
    return found


def environment_of(project: Project, present: list[LoadedTable]) -> EnvironmentRef | None:
    """The selected overlay and, table by table, each value it sets and where (the plan shows them)."""
    overlay = project.environment
    if overlay is None:
        return None
    settings = [OverlaidSetting(table=t.name, setting=setting, value=value, origin=str(source.value(at)))
                for t in present for setting, (value, source, at) in overlaid_settings(project, t.name).items()]
    return EnvironmentRef(name=overlay.name, file=overlay.file, settings=settings)


def _plan_tables(
    project: Project,
    present: list[LoadedTable],
    source: StateSource,
    catalog: str,
    day: date,
    diagnostics: Diagnostics,
    cache: PlanCacheStore | None,
    locations: dict[tuple[str, ...], str] | None,
    settle: Callable[[], None],
    workers: Workers,
) -> list[TablePlan]:
    tables: list[TablePlan | None] = []
    todo: list[tuple[int, LoadedTable, str]] = []
    for table in present:
        # a cached plan names its files as this run displays them (policy_file, origins): paths are in the key
        chain = namespace_chain(project, table)
        files = [*(f"{ns.source.file}\0{ns.digest}" for ns in chain), f"{table.source.file}\0{table.digest}"]
        if project.environment is not None:  # its values and their origins are part of the table's plan
            files.append(f"{project.environment.file}\0{project.environment.digest}")
        key = plan_key(files, catalog)
        location = locations.get(table.name) if locations is not None else None
        tables.append(cache.get(table.name, key, location) if cache is not None and location else None)
        if tables[-1] is None:  # only a miss builds the desired state and reads the table
            todo.append((len(tables) - 1, table, key))
    keys = {position: key for position, _, key in todo}
    for position, planned, findings in plan_misses(project, todo, source, day, settle, workers):
        tables[position] = planned
        diagnostics.extend(findings)
        if cache is not None and not any(f.severity is Severity.ERROR for f in findings):
            cache.put(planned, keys[position])
    return [t for t in tables if t is not None]


def _target(name: str, source: StateSource) -> CatalogRef:
    """The catalog a bare name denotes: the one the source reads when it reads that catalog (a plan records
    the catalog it was made against, type and redacted URI included, however it was asked for)."""
    config = getattr(source, "config", None)
    if isinstance(config, CatalogConfig) and config.name == name:
        return CatalogRef.of(config)
    return CatalogRef(name=name)


Planned = tuple[int, TablePlan, list[Diagnostic]]
PARALLEL_FROM = 200  # below this many tables, starting workers costs more than it saves


def plan_misses(
    project: Project, todo: list[tuple[int, LoadedTable, str]], source: StateSource, day: date,
    settle: Callable[[], None], workers: Workers,
) -> list[Planned]:
    """Plan the tables the cache could not answer; on several cores, in ``workers`` (forked by the runtime).

    Reading and diffing a table is CPU work in Python; workers share the validated project by fork and
    send back only the small TablePlans.
    """
    def plan_one(item: tuple[int, LoadedTable, str]) -> Planned:
        position, table, _ = item
        findings = Diagnostics()
        planned = _plan_table(desired_table(project, table), source, day, findings)
        return position, planned, findings.items

    reopen = getattr(source, "reopen_after_fork", None)
    count = workers.count(len(todo), PARALLEL_FROM) if reopen is not None else 0
    if count:
        return workers.map(plan_one, todo, count, after_fork=reopen)
    planned = []
    for item in todo:
        planned.append(plan_one(item))
        settle()  # metadata read for this table stays referenced until the plan is done
    return planned


def _plan_table(desired: DesiredTable, source: StateSource, day: date, diagnostics: Diagnostics) -> TablePlan:
    state, file = desired.state, desired.table.source.file
    current = source.table(state.name)
    declared_refs = tuple(r.name for r in state.refs)
    if current is None:
        refs, refusals = diff_refs(None, TableHistory(), state)
        _report(refusals, desired, diagnostics)
        return TablePlan(table=state.name, policy_file=file, requirement=Requirement(exists=False),
                         changes=[*creation_changes(state), *refs],
                         declared_properties=tuple(sorted(state.declared_properties)), declared_refs=declared_refs,
                         consumed_approvals=spent_at_create(desired.table.policy.allow_destructive))
    result = diff_table(current.state, state, current.history)
    _report(result.refusals, desired, diagnostics)
    annotated = [_annotate(c, desired, source, day) for c in result.changes]
    return TablePlan(table=state.name, policy_file=file, requirement=requirement_of(current), changes=annotated,
                     declared_properties=tuple(sorted(state.declared_properties)), declared_refs=declared_refs,
                     consumed_approvals=consumed_in(current.state.properties))


def _report(refusals: list[Refusal], desired: DesiredTable, diagnostics: Diagnostics) -> None:
    """Each refusal as a finding where git wrote what it is about: the column, or the branch or tag."""
    policy = desired.table.policy
    for refusal in refusals:
        index = next((i for i, r in enumerate(policy.refs) if ref_name(r) == refusal.ref), None)
        path = ("refs", index) if index is not None else column_yaml_path(policy.columns, refusal.path)
        diagnostics.add(Diagnostic(refusal.code, Severity.WARNING if refusal.warning else Severity.ERROR,
                                   desired.table.source.value(path), refusal.message, refusal.hint))


def _annotate(change: Change, desired: DesiredTable, source: StateSource, day: date) -> Change:
    """Add what the plan reader needs: where each value was written, what a retention change deletes."""
    if isinstance(change, changes.SetProperties):
        marked = tuple(
            c.model_copy(update={"origin": str(loc)})
            if c.setting and (loc := desired.effective.origin(c.setting)) is not None else c
            for c in change.changes
        )
        return change.model_copy(update={"changes": marked})
    if isinstance(change, changes.TightenRetention):
        when = retention_cutoff(day, Duration.parse(change.new))
        estimate = source.estimate_retention(desired.state.name, parse_name(change.column), when)
        return change.model_copy(update={"estimate": estimate})
    return change


def _tombstone(table: LoadedTable, source: StateSource) -> TablePlan | None:
    current = source.table(table.name)
    if current is None:
        return None
    return TablePlan(table=table.name, policy_file=table.source.file, requirement=requirement_of(current),
                     changes=[changes.DropTable(table=table.name, uuid=current.uuid)],
                     consumed_approvals=consumed_in(current.state.properties))


def _readable(view: LoadedView, plan: Callable[[LoadedView, StateSource], TablePlan | None], source: StateSource,
              diagnostics: Diagnostics) -> TablePlan | None:
    """The view's plan; where the catalog cannot read the view (a REST server serving no views), a warning at the
    view's file naming the catalog's answer (TP465), the view left out of the plan (apply never touches it) and
    the tables beside it planned and applied all the same."""
    try:
        return plan(view, source)
    except CatalogError as exc:
        diagnostics.add(Diagnostic(codes.TP465, Severity.WARNING, view.source.key(("view",)),
                                   f"view {format_name(view.name)} is not planned: {exc}",
                                   "declare this view for a catalog that serves views, or remove its file"))
        return None


def _plan_view(view: LoadedView, source: StateSource) -> TablePlan:
    current = source.view(view.name)
    return TablePlan(table=view.name, kind="view", policy_file=view.source.file,
                     requirement=_view_requirement(current), changes=diff_view(current, desired_view(view.policy,
                                                                                                     view.name)))


def _view_tombstone(view: LoadedView, source: StateSource) -> TablePlan | None:
    current = source.view(view.name)
    if current is None:
        return None
    return TablePlan(table=view.name, kind="view", policy_file=view.source.file,
                     requirement=_view_requirement(current),
                     changes=[changes.DropView(table=view.name, uuid=current.uuid)])


def _breaking_for_views(views: list[LoadedView], tables: list[TablePlan]) -> list[Diagnostic]:
    """A warning at each view's SQL that reads a column this plan drops or renames (TP462): the change breaks
    the view, which the table's plan alone does not show."""
    states = {v.name: desired_view(v.policy, v.name) for v in views}
    where = {v.name: v.source.value(("sql",)) for v in views}
    found = []
    for plan in tables:
        if plan.kind == "table":
            for view, what in broken_views(list(states.values()), plan.table, plan.changes):
                found.append(Diagnostic(codes.TP462, Severity.WARNING, where[view.name],
                                        f"view {format_name(view.name)} reads {what}: the view breaks",
                                        "change the view's sql in the same commit (views are replaced after the "
                                        "tables), or keep the column"))
    return found


def _unknown_reads(project: Project, views: list[LoadedView], tables: list[TablePlan], source: StateSource,
                   catalog: str) -> list[Diagnostic]:
    """An error at each view this plan creates or replaces that reads a table neither git nor the catalog has
    (TP463): Spark would refuse to create it at apply."""
    made = changes.CreateView | changes.ReplaceView
    changed = {t.table for t in tables if t.kind == "view" and any(isinstance(c, made) for c in t.changes)}
    declared = {t.name for t in project.tables if t.state == "present"} | {v.name for v in views}
    declared |= getattr(project, "declared_elsewhere", frozenset())  # a selection: tables of the other files
    return unknown_reads([v for v in views if v.name in changed], Known(source, frozenset(declared)), catalog)


def _view_requirement(current: CurrentView | None) -> Requirement:
    """A view is planned against its metadata file: any new version since makes the plan stale."""
    if current is None:
        return Requirement(exists=False)
    return Requirement(exists=True, metadata_location=current.metadata_location, uuid=current.uuid)


def _allowed(project: Project, plan: TablePlan) -> list[str]:
    """The approvals git holds for a table or view (policies are read only for plans with such changes)."""
    if plan.kind == "view":
        return next((v.policy.allow_destructive for v in project.views if v.name == plan.table), [])
    declared = next((t for t in project.tables if t.name == plan.table), None)
    return declared.policy.allow_destructive if declared is not None else []


def _blocked(project: Project, tables: list[TablePlan]) -> list[Blocked]:
    blocked = []
    for t in tables:
        for c in t.changes:
            if c.approval is None:
                continue
            allowed = _allowed(project, t)
            verdict = judge(c, allowed, t.consumed_approvals)
            if not verdict.approved:
                summary = f"{c.summary}: {verdict.reason}" if verdict.reason else c.summary
                blocked.append(Blocked(table=t.table, code=c.code, summary=summary, approval=verdict.entry or "",
                                       policy_file=t.policy_file or ""))
    return blocked


def unused_approvals(project: Project, tables: list[TablePlan]) -> list[Diagnostic]:
    """A warning for each ``allow_destructive`` entry that approves nothing in this plan (TA101)."""
    planned = {t.table: t for t in tables}
    found = []
    for table in project.tables:
        if _no_approvals(table) or not table.policy.allow_destructive:
            continue
        allowed = table.policy.allow_destructive
        plan = planned.get(table.name)
        made, consumed = (plan.changes, plan.consumed_approvals) if plan is not None else ([], ())
        for index in unused(allowed, made, consumed):
            entry = allowed[index]
            earlier = [c.removeprefix(f"{entry} (").removesuffix(")") for c in consumed if c.startswith(f"{entry} (")]
            used = f"; an earlier apply consumed it for {', '.join(earlier)}" if earlier else ""
            found.append(Diagnostic(
                UNUSED_APPROVAL, Severity.WARNING, table.source.value(("allow_destructive", index)),
                f"allow_destructive entry '{entry}' approves no change in this plan{used}",
                "delete this line: a leftover approval must not approve a later change"))
    views = {t.table: t for t in tables if t.kind == "view"}
    for view in project.views:
        allowed = view.policy.allow_destructive
        view_plan = views.get(view.name)
        for index in unused(allowed, view_plan.changes if view_plan is not None else [], ()):
            found.append(Diagnostic(
                UNUSED_APPROVAL, Severity.WARNING, view.source.value(("allow_destructive", index)),
                f"allow_destructive entry '{allowed[index]}' approves no change in this plan",
                "delete this line: a leftover approval must not approve a later change"))
    return found


def _no_approvals(table: LoadedTable) -> bool:
    """Whether a policy restored from the model cache has no approvals, without building its model (a warm
    plan builds few); the JSON is pydantic's, where a key is never part of an escaped string."""
    text = table.model_json if table.model is None else None
    return text is not None and ('"allow_destructive"' not in text or '"allow_destructive":[]' in text)


def requirement_of(current: CurrentTable) -> Requirement:
    return Requirement(
        exists=True,
        metadata_location=current.metadata_location,
        uuid=current.uuid,
        schema_id=current.schema_id,
        spec_id=current.spec_id,
        sort_order_id=current.sort_order_id,
        format_version=current.state.format_version,
        properties_digest=properties_digest(current.state.properties),
        refs_digest=refs_digest(current),
    )


def refs_digest(current: CurrentTable) -> str | None:
    """sha256 of the table's branches and tags other than main, by name, kind and retention (None: it has
    none). Where they point is left out: writers move branches, which no plan depends on."""
    if not current.state.refs:
        return None
    refs = [(r.name, r.kind, r.retention.model_dump()) for r in current.state.refs]
    return hashlib.sha256(json.dumps(refs, sort_keys=True).encode()).hexdigest()[:16]


def properties_digest(properties: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(sorted(properties.items())).encode()).hexdigest()[:16]
