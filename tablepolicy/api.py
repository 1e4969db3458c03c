"""The functions of the public API. The CLI is a client of these: each command calls one and renders its result.

Every function takes the path of a policies directory (or one policy file, or any path inside the project), a
catalog (a name configured in .pyiceberg.yaml / PYICEBERG_CATALOG__*, a CatalogConfig, or None for the project's
default), and an environment (the name of environments/NAME.yaml; None: TABLEPOLICY_ENV if set, else none).
Misuse raises a TablePolicyError subclass whose message says what exists and how to fix it; nothing prints.

Heavy modules (pyiceberg's catalogs, the planner, Spark) are imported by the function that needs them, so
``import tablepolicy`` stays cheap and ``validate`` never loads a catalog client.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.diagnostics import Diagnostic, Diagnostics
from tablepolicy.compiler.errors import PolicyError, TablePolicyError
from tablepolicy.compiler.paths import ProjectPath, ProjectPaths, find_project
from tablepolicy.runtime.caches.folder import cache_dir, caches_on, project_cache
from tablepolicy.runtime.forked import FORKED
from tablepolicy.runtime.invocation import Invocation, resolve_invocation
from tablepolicy.runtime.target import Target, requested_environment

if TYPE_CHECKING:  # result types load with the function returning one: validate needs no plan or report model
    from tablepolicy.compiler.loader import Project
    from tablepolicy.compiler.maintenance.due import MaintenancePlan
    from tablepolicy.compiler.maintenance.view_health import ViewsHealth
    from tablepolicy.compiler.modelcache import ModelCache
    from tablepolicy.compiler.plan.model import Plan
    from tablepolicy.compiler.project import WholeProject
    from tablepolicy.runtime.apply import ApplyReport, StepResult
    from tablepolicy.runtime.catalog.reader import CatalogReader
    from tablepolicy.runtime.erase_run import ErasureOutcome, ErasureStatus
    from tablepolicy.runtime.events import ProgressCallback
    from tablepolicy.runtime.history import Event as HistoryEvent
    from tablepolicy.runtime.maintain import Locations

    from .results import DriftOutcome, HealthOutcome, Imported, MaintainOutcome, PlanOutcome, Validation

PathLike = str | os.PathLike[str]
# a path of the project, the project a caller already found from one, or the whole front door it resolved
Where = PathLike | ProjectPaths | Invocation
CatalogLike = str | CatalogConfig | Target | None  # a Target: the catalog and environment already resolved
DEFAULT_MASTER = "local[2]"
READER_CODES = ("TG112", "TG113")  # what a declared reader cannot read, or no source says it can


def validate(path: Where = "policies", *, environment: str | None = None) -> Validation:
    """Check every policy file under ``path`` (and, without an environment, every overlay against the policies)."""
    from tablepolicy.runtime.caches.verdict import overlay_digests, save_verdict, saved_validation

    from .results import Validation

    where = project_of(path)
    name, flag = requested_environment(environment)
    cache = None
    if caches_on(where):
        saved = saved_validation(where, name, flag)
        if saved.answer is not None:  # nothing changed since a run that kept its findings
            return Validation(_with_tracked_requests(where, _with_strays(where, saved.answer[1])), saved.answer[0])
        cache = project_cache(where, saved.index)
    if cache is None:
        _, files, findings = _validated(where, None, name, flag).selected()
        return Validation(_with_tracked_requests(where, _with_strays(where, findings)), files)
    overlays = overlay_digests(where)  # before the run reads them: an overlay edited meanwhile is not vouched for
    cache.pack_models = False  # nothing here reads a table's model: no need to pack 10,000 of them
    whole = _validated(where, cache, name, flag, saved.listed)
    if cache.saved:
        save_verdict(where, name, flag, whole.verdict(), cache, whole.listed, overlays)
    _, files, findings = whole.selected()
    return Validation(_with_tracked_requests(where, _with_strays(where, findings)), files)


def _with_tracked_requests(where: ProjectPaths, findings: Diagnostics) -> Diagnostics:
    """The findings and TP619 for each requests file holding key values that git tracks in the project's work tree
    (read from git's index: never cached, a file staged since the last run counts)."""
    from tablepolicy.runtime.tracked_requests import tracked_requests

    tracked = tracked_requests(where.root)
    if not tracked.items:
        return findings
    return Diagnostics([*findings.items, *tracked.items])


def _with_strays(where: ProjectPaths, findings: Diagnostics) -> Diagnostics:
    """The findings and a warning for each table policy outside the project's policies folder (TP010)."""
    from tablepolicy.compiler.paths import stray_findings  # no policy model: a cached answer stays light

    strays = stray_findings(where)
    return Diagnostics([*findings.items, *strays]) if strays else findings


def _validated(where: ProjectPaths, cache: ModelCache | None, name: str | None, flag: str,
               listed: list[str] | None = None) -> WholeProject:
    from tablepolicy.compiler.project import load_whole

    return load_whole(where, cache, name, every_environment=True, environment_flag=flag, workers=FORKED,
                      listed=listed)


def project_of(path: Where) -> ProjectPaths:
    """The project ``path`` belongs to, found once per call at the edge and handed on as this value."""
    if isinstance(path, Invocation):
        return path.project
    return path if isinstance(path, ProjectPaths) else find_project(Path(path))


def invocation(path: Where = "policies", *, catalog: CatalogLike = None, environment: str | None = None,
               now: datetime | None = None) -> Invocation:
    """A command's front door resolved once: the project ``path`` belongs to, the catalog and environment it
    targets (refused when they contradict each other) and the run's instant (default: the clock). Every function
    here takes it as its ``path`` and resolves none of it again; one given here is returned as it is."""
    if isinstance(path, Invocation):
        given = [name for name, value in (("catalog", catalog), ("environment", environment), ("now", now))
                 if value is not None]
        if given:  # never one of two answers in silence
            raise TablePolicyError(f"{', '.join(given)} given beside an Invocation, which already resolved them; "
                                   "pass them to tablepolicy.invocation(...) instead")
        return path
    return resolve_invocation(project_of(path), catalog, environment, now=now)


def target(path: Where = "policies", *, catalog: CatalogLike = None,
           environment: str | None = None) -> Target:
    """The catalog and environment a command on ``path`` targets (refused when they contradict each other)."""
    return invocation(path, catalog=catalog, environment=environment).target


def load_project(path: Where = "policies", *, environment: str | None = None,
                 use_cache: bool = True, chosen: Target | None = None) -> tuple[Project, Diagnostics]:
    """The validated project (with the environment's overlay) and its warnings; PolicyError on any error.
    ``path``: an Invocation brings its environment and overlay as read; ``chosen``: the target already
    resolved, whose overlay file is taken as read."""
    from tablepolicy.compiler.project import load_selected

    where = project_of(path)
    if isinstance(path, Invocation):
        chosen = path.target
        name, flag = chosen.environment_name, chosen.environment_flag
    else:
        name, flag = requested_environment(environment)
    project, _, findings = load_selected(where, project_cache(where) if use_cache else None, name,
                                         environment_flag=flag, workers=FORKED,
                                         overlay_read=chosen.overlay_read if chosen is not None else None)
    if findings.has_errors:
        raise PolicyError(findings)
    return project, _with_strays(where, findings)


def plan(path: Where = "policies", *, catalog: CatalogLike = None, environment: str | None = None,
         use_cache: bool = True, today: date | None = None) -> PlanOutcome:
    """Compare the policies with the live catalog (no JVM): what apply would do. PolicyError when a policy is
    invalid or the diff refuses a change (each finding with its code and location). ``today``: the date the plan
    is made on (a retention window counts from it; default: today in UTC)."""
    from .results import PlanOutcome

    run = invocation(path, catalog=catalog, environment=environment)
    project, warnings = load_project(run, use_cache=use_cache)
    with open_reader(run.catalog) as reader:
        planned, findings = plan_with(project, run.project, reader, use_cache=use_cache, today=today or run.today)
    # a reader finding of a change the plan makes is said once, as the plan says it (naming the change), not
    # also as validate said it of the declared state at the same line
    said = {(d.code, str(d.location)) for d in findings.items if d.code in READER_CODES}
    kept = [d for d in warnings.items if (d.code, str(d.location)) not in said]
    return PlanOutcome(planned, Diagnostics([*kept, *findings.items]), run.target)


def plan_with(project: Project, path: ProjectPath, reader: CatalogReader, *, use_cache: bool = True,
              today: date | None = None) -> tuple[Plan, Diagnostics]:
    """The plan of a loaded project against an open catalog reader (drift reuses the reader)."""
    from tablepolicy.compiler.plan.model import CatalogRef
    from tablepolicy.compiler.plan.planner import make_plan
    from tablepolicy.compiler.project import restrict_plan
    from tablepolicy.runtime.caches.plans import PlanCache
    from tablepolicy.runtime.gitinfo import git_sha

    paths = find_project(path)
    cache = PlanCache.open(cache_dir(paths) / "plan-cache.json") if use_cache and caches_on(paths) else None
    sha = git_sha(paths.policies, paths.root / "environments")
    result = make_plan(project, reader, CatalogRef.of(reader.config), sha, today=today or datetime.now(UTC).date(),
                       cache=cache, workers=FORKED)
    if result.refused:
        raise PolicyError(result.diagnostics)
    if cache is not None:
        cache.save()
    return restrict_plan(result.plan, project), result.diagnostics


def save_plan(planned: Plan, path: PathLike) -> None:
    """Write the plan file ``apply`` takes (JSON; the same plan gives the same bytes)."""
    from tablepolicy.compiler.plan.codec import plan_to_json

    Path(path).write_text(plan_to_json(planned), encoding="utf-8")


def load_plan(path: PathLike) -> Plan:
    """A saved plan, checked as apply checks it (version, shape, that it was not edited); PlanFileError naming
    the file and how to make a new one otherwise. No catalog and no policies are read."""
    from tablepolicy.compiler.plan.codec import PlanFileError, plan_from_json

    where = Path(path)
    regenerate = (f"; plan again and save it: tablepolicy plan POLICIES --out {where} (then review it and apply "
                  "that file)")
    try:
        text = where.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PlanFileError(f"{where}: not a valid plan file: it is not UTF-8 text{regenerate}") from None
    except OSError as exc:
        raise PlanFileError(f"{where}: cannot read the plan file ({exc.strerror or 'unreadable'}); make it "
                            "readable, or plan again and save it: tablepolicy plan POLICIES --out FILE") from None
    try:
        return plan_from_json(text)
    except PlanFileError as exc:
        edited = str(exc).startswith("the plan file was edited")  # already says to plan again
        raise PlanFileError(f"{where}: {exc}" + ("" if edited else regenerate)) from None


def apply(
    planned: Plan | PathLike, *, policies: Where = "policies", catalog: CatalogLike = None,
    environment: str | None = None, spark_master: str = DEFAULT_MASTER, spark_conf: Mapping[str, str] | None = None,
    journal: PathLike | None = None, verify: bool = True, on_step: Callable[[StepResult], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> ApplyReport:
    """Apply a reviewed plan through Spark, step by step, resumably (a re-run after a failure skips what ran).

    ``planned``: a saved plan file or a Plan. Its catalog and environment are used unless others are given (a
    catalog the plan was not made for is refused). ``policies``: the reviewed policies, or the Invocation a caller
    resolved for them (its catalog and environment are then the run's). ``verify``: first check the plan against
    the plan derived now from ``policies`` and the catalog (refused with StalePlanError / PlanMismatchError when
    they differ, or when git has not approved a destructive change: nothing runs). ``journal``: where completed
    steps are recorded (default: beside a plan file, else in the project's .tablepolicy/). ``on_step``: told of
    each step as it ends; ``on_notice``: of each note (a step found already applied)."""
    from tablepolicy.compiler.plan.model import Plan as PlanModel
    from tablepolicy.compiler.plan.steps import plan_id_of
    from tablepolicy.runtime.apply import apply_plan
    from tablepolicy.runtime.spark.session import SparkOptions

    saved = None if isinstance(planned, PlanModel) else Path(planned)
    the_plan = load_plan(saved) if saved is not None else planned
    assert isinstance(the_plan, PlanModel)
    if the_plan.blocked:
        raise BlockedPlanError("the plan holds destructive changes git has not approved; nothing was applied")
    if isinstance(policies, Invocation):
        run = invocation(policies, catalog=catalog, environment=environment)
    else:  # the plan's catalog and environment unless others are asked for
        run = resolve_invocation(project_of(policies), catalog, environment, saved_catalog=the_plan.catalog,
                                 saved_environment=the_plan.environment.name if the_plan.environment else None)
    if journal is None:
        journal = (saved.with_name(saved.name + ".journal") if saved is not None
                   else cache_dir(run.project) / f"journal-{plan_id_of(the_plan)}.jsonl")
    options = SparkOptions.from_flags(spark_master, [f"{k}={v}" for k, v in sorted((spark_conf or {}).items())])
    return apply_plan(the_plan, run.catalog, options, journal_path=Path(journal), invocation=run, verify=verify,
                      on_result=on_step or (lambda _r: None), on_notice=on_notice or (lambda _m: None))


class BlockedPlanError(TablePolicyError):
    """The plan holds destructive changes git has not approved (the CLI's exit 3); nothing was applied."""


def _decide(
    run: Invocation, *, tables: Sequence[str], only: Sequence[str], locations: Locations,
    on_work: Callable[[object], None] = lambda _t: None, views: list[ViewsHealth] | None = None,
    unreadable: list[Diagnostic] | None = None,
) -> MaintenancePlan:
    """What the lifecycle policy makes due ``now`` on each selected table (``tables``: dotted names; ``only``:
    action names, both checked before the catalog is read)."""
    from tablepolicy.compiler.maintenance.due import maintenance_plan
    from tablepolicy.compiler.maintenance.select import selection
    from tablepolicy.runtime.health import CatalogHealth
    from tablepolicy.runtime.maintain import orphan_scanner

    project, _ = load_project(run)
    chosen_tables = selection((t.name for t in project.tables if t.state == "present"), list(tables), list(only))
    with open_reader(run.catalog) as reader:
        scan = orphan_scanner(reader, locations)
        moment = run.now.replace(microsecond=0)
        health = CatalogHealth(reader, scan, footers=views is not None)  # health reads footers, maintain does not
        decided = maintenance_plan(project, health, moment, selection=chosen_tables,
                                   on_work=on_work)
        if views is not None:  # health: the selected namespaces' views, read with the same reader
            from tablepolicy.runtime.view_health import read_views_health

            views.append(read_views_health(reader, project, moment))
        if unreadable is not None:  # health: what a declared reader already cannot read in each table
            unreadable.extend(_unreadable_now(project, decided, reader))
        return decided


def _unreadable_now(project: Project, decided: MaintenancePlan, reader: CatalogReader) -> list[Diagnostic]:
    from tablepolicy.compiler.plan.locate import column_yaml_path
    from tablepolicy.compiler.readers.check import unreadable_now
    from tablepolicy.compiler.readers.declared import any_declared

    if not any_declared(project):
        return []
    declared = {t.name: t for t in project.tables}
    found = []
    for table in decided.tables:
        current = reader.table(table.table)
        if current is not None and table.table in declared:
            found += unreadable_now(project, declared[table.table], current.state, table.health.position_delete_files,
                                    table.health.equality_delete_files, column_yaml_path)
    return found


def health(path: Where = "policies", *, catalog: CatalogLike = None, environment: str | None = None,
           now: datetime | None = None) -> HealthOutcome:
    """Each declared table's health read from its metadata without a JVM (snapshots, files, small files, delete
    files, manifests, orphan bytes, refs), the maintenance due ``now`` (default: the clock), and the views of the
    selected namespaces (version, age, same as git or not)."""
    from tablepolicy.runtime.maintain import Locations

    from .results import HealthOutcome

    run = invocation(path, catalog=catalog, environment=environment, now=now)
    views: list[ViewsHealth] = []
    unreadable: list[Diagnostic] = []
    decided = _decide(run, tables=(), only=(), locations=Locations(), views=views, unreadable=unreadable)
    return HealthOutcome(decided, run.target, views[0], Diagnostics(unreadable))


def maintain(
    path: Where = "policies", *, catalog: CatalogLike = None, environment: str | None = None,
    tables: Sequence[str] = (), only: Sequence[str] = (), dry_run: bool = False,
    spark_master: str = DEFAULT_MASTER, spark_conf: Mapping[str, str] | None = None, now: datetime | None = None,
    progress: ProgressCallback | None = None,
) -> MaintainOutcome:
    """Run the maintenance the lifecycle policy makes due ``now``: rewrites and retention deletes through Spark
    (started only when one is due), snapshot expiry and orphan removal without it. ``dry_run``: decide and
    estimate, change nothing. ``progress``: told of each event (tablepolicy.events) as the run goes."""
    from tablepolicy.compiler.maintenance.due import TableMaintenance
    from tablepolicy.compiler.maintenance.sequence import estimated
    from tablepolicy.compiler.render.maintenance import action_sql
    from tablepolicy.runtime.events import CallbackProgress, MaintenanceDecided
    from tablepolicy.runtime.maintain import Locations, run_maintenance
    from tablepolicy.runtime.spark.session import SessionOnDemand, SparkOptions

    from .results import MaintainOutcome

    run = invocation(path, catalog=catalog, environment=environment, now=now)
    locations = Locations()
    options = SparkOptions.from_flags(spark_master, [f"{k}={v}" for k, v in sorted((spark_conf or {}).items())])
    # Spark starts on a thread as soon as a table with work for Spark is decided, never on a run that needs none
    spark = None if dry_run else SessionOnDemand(run.catalog, options)

    def start(work: object) -> None:
        if spark is not None and isinstance(work, TableMaintenance) and work.needs_spark:
            spark.start()

    decided = _decide(run, tables=tables, only=only, locations=locations, on_work=start)
    if progress is not None:
        progress(MaintenanceDecided(decided))
    config = run.catalog
    if dry_run or not decided.actions:
        report = estimated(decided, lambda a: action_sql(a, config.name), config.summary())
    else:
        assert spark is not None
        report = run_maintenance(decided, config, spark.options, lock_dir=cache_dir(run.project),
                                 progress=CallbackProgress(progress) if progress is not None else None,
                                 locations=locations, session=spark)
    return MaintainOutcome(decided, report, run.target)


def drift(path: Where = "policies", *, catalog: CatalogLike = None, environment: str | None = None
          ) -> DriftOutcome:
    """What the catalog holds that git does not say (the reverse of plan); the namespaces and tables git never
    mentions are looked for when ``path`` is the whole project (they are listed, never drift)."""
    from tablepolicy.compiler.desired import desired_states
    from tablepolicy.compiler.drift import find_drift
    from tablepolicy.compiler.project import SelectedProject

    from .results import DriftOutcome

    run = invocation(path, catalog=catalog, environment=environment)
    project, _ = load_project(run)
    with open_reader(run.catalog) as reader:
        planned, _ = plan_with(project, run.project, reader, today=run.today)
        desired = {state.name: state for state in desired_states(project)}
        inventory = None if isinstance(project, SelectedProject) else reader.inventory()
        found = find_drift(planned, reader, desired, project, inventory)
    return DriftOutcome(found, run.target)


def open_reader(config: CatalogConfig) -> CatalogReader:
    """The catalog reader, imported on first use: pyiceberg's catalogs and SQLAlchemy take a third of a
    second to import. Reading creates nothing: an embedded catalog not created yet reads as empty."""
    from tablepolicy.runtime.catalog.reader import CatalogReader

    return CatalogReader(config, create=False)


def history(table: str, *, catalog: CatalogLike = None, policies: Where = "policies") -> list[HistoryEvent]:
    """Which plan, git commit and user changed ``table`` (e.g. ``"sales.orders"``) and when, and the snapshots that
    wrote its data, oldest first: read from apply's stamps in the table's metadata log and the snapshot summaries
    (no JVM). ``policies`` locates the project's embedded catalog."""
    from tablepolicy.compiler.iceberg.names import parse_name
    from tablepolicy.runtime.history import table_history

    try:
        name = parse_name(table)
    except ValueError as exc:
        raise TablePolicyError(f"TABLE {table!r}: {exc}") from None
    run = invocation(policies, catalog=catalog)
    with open_reader(run.catalog) as reader:
        return table_history(reader, name)


def import_tables(
    tables: Sequence[str] = (), *, namespaces: Sequence[str] = (), recursive: bool = False,
    catalog: CatalogLike = None, policies: PathLike = "policies", out: PathLike | None = None, force: bool = False,
) -> Imported:
    """Policy YAML for existing catalog tables and views (``tables``: exact names, ``ns.*`` or ``ns.**``;
    ``namespaces``: every table of each), such that a plan right after shows no changes. With ``out``, one file
    per table is written under it, all or nothing (ImportRefused lists every reason when nothing was written)."""
    from tablepolicy.compiler.iceberg.names import format_name
    from tablepolicy.runtime.catalog.config import resolve_catalog
    from tablepolicy.runtime.importing import read_documents, write_documents

    from .results import Imported

    where = Path(policies)
    config = (catalog.catalog if isinstance(catalog, Target) else catalog if isinstance(catalog, CatalogConfig)
              else resolve_catalog(catalog, where))
    documents = read_documents(list(tables), list(namespaces), config, recursive=recursive,
                               out=Path(out) if out is not None else None)
    texts = {format_name(name): document("") for name, document in documents.items()}
    if out is None:
        return Imported(texts, (), Diagnostics())
    written, findings = write_documents(documents, Path(out), force=force)
    return Imported(texts, written, findings)



def catalog(name: str | None = None, path: PathLike = "policies") -> CatalogConfig:
    """The catalog ``name`` configures (.pyiceberg.yaml, PYICEBERG_CATALOG__*, TABLEPOLICY_CATALOG), or the
    project's default; a name nothing defines raises CatalogError listing the names that are defined."""
    from tablepolicy.runtime.catalog.config import resolve_catalog

    return resolve_catalog(name, Path(path))


def erase(
    path: Where = "policies", *, requests: PathLike | None = None, requests_table: str | None = None,
    catalog: CatalogLike = None, environment: str | None = None, dry_run: bool = False,
    proof: PathLike | None = None, spark_master: str = DEFAULT_MASTER,
    spark_conf: Mapping[str, str] | None = None, debris_min_age: timedelta | str | None = None,
    now: datetime | None = None, progress: ProgressCallback | None = None, prune: bool = True,
    cluster_above: int | str | None = None,
) -> ErasureOutcome:
    """Erase the data subjects of ``requests`` (a .yaml, .csv or .jsonl file outside any git work tree, or ``-``:
    standard input) or of ``requests_table`` (the pending rows of a request table in the catalog, whose keys are
    then replaced by their fingerprint and its history expired) physically from the tables that declare erasure:
    delete, rewrite, expire, prove, record in the ledger (requests done earlier are skipped).
    ``dry_run``: what the requests reach and every statement a run starts with, read without a JVM.
    ``proof``: also write the proof file (no key value in it). ``debris_min_age``: unreadable files no snapshot
    reads are deleted only when older (default: the table's orphan_files.older_than, else 3d). ``progress``: told
    of each tablepolicy.events value (what was decided, each step, each table erased) as the run goes.
    ``prune``: False reads every file's key columns, none excluded by manifest bounds, row-group statistics or
    bloom filters (for audits, and the baseline of benchmarks).
    ``cluster_above``: bytes (or a size: 50GB): with a cluster ``spark_master``, a table whose files list more is
    surveyed and proven by the executors (default: its lifecycle.erasure.cluster_above, else 10GiB).
    ``outcome.complete``: every table erased and proven, or held by a declared legal hold."""
    from tablepolicy.runtime import erase_run as erasure

    age = erasure.debris_min_age(debris_min_age, "debris_min_age") if isinstance(debris_min_age, str) \
        else debris_min_age
    threshold = erasure.cluster_above(cluster_above, "cluster_above") if isinstance(cluster_above, str) \
        else cluster_above
    if threshold is not None and threshold <= 0:
        raise TablePolicyError(f"cluster_above: {threshold} bytes: give a positive size (1 reads every table on the "
                               "cluster)")
    run = invocation(path, catalog=catalog, environment=environment, now=now)
    project, _ = load_project(run)
    conf = [f"{k}={v}" for k, v in sorted((spark_conf or {}).items())]
    source = erasure.RequestSource(file=Path(requests) if requests is not None else None, table=requests_table)
    outcome = erasure.erase(run.project, source, run.target, project, dry_run=dry_run,
                            spark={"master": spark_master, "conf": conf}, now=run.now, debris_age=age,
                            progress=progress or (lambda _e: None), prune=prune, cluster_above=threshold)
    if proof is not None and not dry_run:
        Path(proof).write_text(erasure.proof_document(outcome, run.now), encoding="utf-8")
    return outcome


def erase_status(path: Where = "policies", *, catalog: CatalogLike = None, environment: str | None = None,
                 requests: PathLike | None = None, requests_table: str | None = None,
                 today: date | None = None) -> ErasureStatus:
    """Each erasure request of the ledger (or of ``requests``, those the ledger does not know yet as pending) on
    the selected tables, without a JVM: done with its proof, pending, held or overdue as of ``today``."""
    from tablepolicy.runtime import erase_run as erasure

    run = invocation(path, catalog=catalog, environment=environment)
    project, _ = load_project(run)
    source = None if requests is None and requests_table is None else erasure.RequestSource(
        file=Path(requests) if requests is not None else None, table=requests_table)
    return erasure.erase_status(run.project, run.target, project, source, today or run.today)
