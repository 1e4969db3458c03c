"""What each command does: call the compiler or runtime, hand results to the views, return an exit code."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

import typer

from compiler import jsontext
from compiler.catalog.config import CatalogConfig
from compiler.desired import create_all, desired_states
from compiler.diagnostics import Diagnostics
from compiler.drift import find_drift
from compiler.errors import CatalogError, PolicyError, TablePolicyError
from compiler.fmt import YAMLError, format_diff, format_text
from compiler.importer import (
    ExactTable,
    Inventory,
    NamespaceTables,
    Selector,
    namespace_selector,
    parse_selector,
    policy_file,
    policy_yaml,
    select_tables,
    view_policy_yaml,
)
from compiler.loader import Project, discover, display_path
from compiler.model.names import format_name
from compiler.paths import find_project
from compiler.plan.model import CatalogRef, Plan
from compiler.plan.planner import PlanResult, make_plan
from compiler.project import SelectedProject, load_selected, restrict_plan
from compiler.render.drift import drift_json, render_drift
from compiler.render.findings import findings_markdown
from compiler.render.json_plan import PlanFileError, plan_from_json, plan_to_json
from compiler.render.markdown import render_markdown
from compiler.render.sql import statements
from compiler.render.text import render_text
from compiler.schema import policy_json_schema_text
from runtime.caches.plans import PlanCache
from runtime.catalog.config import resolve_catalog
from runtime.cli.apply_view import failure_json, report_json, show_complete, show_notice, show_statements, show_step
from runtime.cli.checking import cache_dir, caches_on, project_cache
from runtime.cli.exits import Exit
from runtime.cli.flags import FlagError
from runtime.cli.formats import DriftFormat, Format
from runtime.cli.views import catalog_header, error, info, paint, show_diagnostics, show_provenance
from runtime.forked import FORKED
from runtime.gitinfo import git_sha
from runtime.target import Target, requested_environment, resolve_target

if TYPE_CHECKING:
    from compiler.model.table import TableState
    from compiler.model.view import CurrentView
    from runtime.apply import StepResult
    from runtime.catalog.reader import CatalogReader


def open_reader(config: CatalogConfig) -> CatalogReader:
    """The catalog reader, imported on first use: pyiceberg's catalogs and SQLAlchemy take a third of a
    second to import, and apply starts Spark before it needs them. Reading creates nothing: an embedded
    catalog not created yet reads as empty (apply's and Spark's writes create it)."""
    from runtime.catalog.reader import CatalogReader

    return CatalogReader(config, create=False)


def valid_project(path: Path, *, use_cache: bool = True, environment: str | None = None) -> Project:
    """The project (with the overlay of ``environment`` in effect, the flag or TABLEPOLICY_ENV), or PolicyError
    carrying every finding; warnings are shown either way."""
    name, flag = requested_environment(environment)
    project, _, diagnostics = load_selected(path, project_cache(path) if use_cache else None, name,
                                            environment_flag=flag, workers=FORKED)
    if diagnostics.has_errors:
        raise PolicyError(diagnostics)
    show_diagnostics(diagnostics)
    return project


def init(directory: Path, *, install: str, force: bool) -> int:
    from runtime.scaffold import Scaffold, ScaffoldError
    from runtime.scaffold.source import InstallSourceError, install_line

    try:
        line = install_line(install, directory)
        written = Scaffold(directory, line.spec).write(force=force)
    except (ScaffoldError, InstallSourceError) as exc:
        error(str(exc))
        return Exit.ERROR
    for path in written:
        info(f"wrote {display_path(path)}")
    info(f"Workflows install {line.spec!r} ({line.origin}; change with --install). Next: tablepolicy validate "
         f"{display_path(directory / 'policies')}, then open a pull request.")
    return Exit.OK


def ddl(path: Path, catalog: str | None, environment: str | None = None) -> int:
    name = resolve_target(path, catalog, environment).catalog.name
    project = valid_project(path, environment=environment)
    for change in create_all(project):
        for statement in statements(change, name):
            info(f"-- {change.summary}\n{statement.sql};\n")
    return Exit.OK


def schema() -> int:
    typer.echo(policy_json_schema_text(), nl=False)
    return Exit.OK


def fmt(path: Path, *, check: bool, diff: bool = False) -> int:
    """Format (or with ``check``, list; with ``diff``, print the unified diff of) the policy files under ``path``.
    ``check`` and ``diff`` write nothing and exit ERROR when a file would change. A file that cannot be read or
    does not parse is left as it is and makes the exit code ERROR in every mode."""
    unformatted = broken = 0
    for file in discover(path):
        try:
            formatted = format_text(text := file.read_text(encoding="utf-8"))
        except (YAMLError, UnicodeDecodeError) as exc:
            error(f"{display_path(file)}: not formatted, YAML does not parse: {str(exc).splitlines()[0]}")
            broken += 1
            continue
        except OSError as exc:
            error(f"{display_path(file)}: not formatted, cannot be read: {exc.strerror or exc}")
            broken += 1
            continue
        if formatted == text:
            continue
        unformatted += 1
        if diff:  # stdout is the patch alone (patch -p0 applies it); which files, on stderr
            typer.echo(format_diff(text, formatted, display_path(file)), nl=False)
            typer.echo(f"would reformat {display_path(file)}", err=True)
        elif check:
            info(f"would reformat {display_path(file)}")
        else:
            file.write_text(formatted, encoding="utf-8")
            info(f"formatted {display_path(file)}")
    return Exit.ERROR if broken or ((check or diff) and unformatted) else Exit.OK


def compute_plan(path: Path, catalog: str | CatalogConfig | None, *, use_cache: bool = True,
                 environment: str | None = None) -> PlanResult:
    config = catalog if isinstance(catalog, CatalogConfig) else resolve_target(path, catalog, environment).catalog
    project = valid_project(path, use_cache=use_cache, environment=environment)
    with open_reader(config) as reader:
        return plan_project(project, path, reader, use_cache=use_cache)


def plan_project(project: Project, path: Path, reader: CatalogReader, *, use_cache: bool = True) -> PlanResult:
    cache = PlanCache.open(cache_dir(path) / "plan-cache.json") if use_cache and caches_on(path) else None
    paths = find_project(path)
    sha = git_sha(paths.policies, paths.root / "environments")
    result = make_plan(project, reader, CatalogRef.of(reader.config), sha, today=datetime.now(UTC).date(), cache=cache,
                       workers=FORKED)
    if result.refused:
        raise PolicyError(result.diagnostics)
    show_diagnostics(result.diagnostics)  # warnings, e.g. approvals that approve nothing (TA101)
    if cache is not None:
        cache.save()
    return PlanResult(restrict_plan(result.plan, project), result.diagnostics)


RENDERERS: dict[Format, Callable[[PlanResult, Target], str]] = {
    Format.text: lambda result, target: target.header() + "\n" + render_text(result.plan, lambda t, c: paint(t, c)),
    Format.markdown: lambda result, target: render_markdown(result.plan, result.diagnostics, catalog=target.header()),
    Format.json: lambda result, _target: plan_to_json(result.plan),
}


def shown_path(path: Path) -> str:
    """``path`` relative to the working folder when it lies under it, else as it is."""
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def plan(
    path: Path, catalog: str | None, *, out: Path | None, output: Format, detailed_exitcode: bool, use_cache: bool,
    environment: str | None = None,
) -> int:
    target = resolve_target(path, catalog, environment)
    if output is Format.json:
        typer.echo(target.header(), err=True)  # stdout is the plan file, which records the catalog itself
    try:
        result = compute_plan(path, target.catalog, use_cache=use_cache, environment=environment)
    except PolicyError as exc:
        if output is not Format.markdown:
            raise
        # the pull-request comment of a plan that could not be made shows why, not nothing
        typer.echo(f"### tablepolicy plan · {target.header()}\n\n**The plan could not be made:** fix these "
                   f"findings and push again.\n\n{findings_markdown(exc.diagnostics)}", nl=False)
        raise
    typer.echo(RENDERERS[output](result, target), nl=False)
    show_provenance(result.plan.git_sha, shown_path(find_project(path).policies))
    if out is not None:
        out.write_text(plan_to_json(result.plan), encoding="utf-8")
        typer.echo(f"Saved the plan to {out}; apply it with: tablepolicy apply {out}", err=True)
    if result.plan.blocked:
        return Exit.BLOCKED
    if detailed_exitcode and result.plan.has_changes:
        return Exit.CHANGES
    return Exit.OK


def show(path: Path, *, output: Format) -> int:
    """A saved plan in any format, as reviewed (Terraform's show): no catalog, no policies, nothing written."""
    saved = read_plan_file(path)
    target = saved.target
    where = f" · environment {saved.environment.name}" if saved.environment is not None else ""
    header = f"Catalog: {target.name} ({target.type or '?'}, {target.uri or '?'}){where} · saved plan {path}"
    match output:
        case Format.text:
            typer.echo(header + "\n" + render_text(saved, lambda t, c: paint(t, c)), nl=False)
        case Format.markdown:
            typer.echo(render_markdown(saved, Diagnostics(), catalog=header), nl=False)
        case Format.json:
            typer.echo(plan_to_json(saved), nl=False)
        case _:
            assert_never(output)
    return Exit.OK


@dataclass(frozen=True)
class ApplyInput:
    """What an apply runs: a saved plan (checked against ``policies`` before Spark starts) or one derived now."""

    plan: Plan
    catalog: CatalogConfig
    environment: str | None
    policies: Path
    journal: Path
    saved: bool


def read_plan_file(path: Path) -> Plan:
    """The saved plan at ``path``; a file that is not one is refused naming it and how to make a new one."""
    regenerate = (f"; plan again and save it: tablepolicy plan POLICIES --out {path} (then review it and apply "
                  "that file)")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PlanFileError(f"{path}: not a valid plan file: it is not UTF-8 text{regenerate}") from None
    except OSError as exc:
        raise PlanFileError(f"{path}: cannot read the plan file ({exc.strerror or 'unreadable'}); make it "
                            "readable, or plan again and save it: tablepolicy plan POLICIES --out FILE") from None
    try:
        return plan_from_json(text)
    except PlanFileError as exc:
        edited = str(exc).startswith("the plan file was edited")  # already says to plan again
        raise PlanFileError(f"{path}: {exc}" + ("" if edited else regenerate)) from None


def is_saved_plan(path: Path) -> bool:
    """apply's argument names a plan file (saved by plan --out), not policies to plan now."""
    return path.is_file() and path.suffix == ".json"


def apply_input(path: Path, catalog: str | None, policies: Path, environment: str | None) -> ApplyInput:
    """Read the saved plan ``path`` (its catalog and environment unless others are asked for; another one is
    refused with the catalog checks), or plan ``path`` now; the header names the catalog either way."""
    from runtime.apply import plan_id_of

    if is_saved_plan(path):
        catalog_header(apply_catalog(path, catalog, policies))
        planned = read_plan_file(path)
        environment = requested_environment(environment)[0] or (
            planned.environment.name if planned.environment is not None else None)
        return ApplyInput(planned, resolve_catalog(catalog or planned.catalog, policies), environment, policies,
                          path.with_name(path.name + ".journal"), saved=True)
    target = resolve_target(path, catalog, environment)
    catalog_header(target)
    planned = compute_plan(path, target.catalog, environment=environment).plan
    return ApplyInput(planned, target.catalog, target.environment_name, path,
                      cache_dir(path) / f"journal-{plan_id_of(planned)}.jsonl", saved=False)


def apply(
    path: Path,
    catalog: str | None,
    *,
    auto_approve: bool,
    master: str,
    conf: list[str],
    dry_run: bool,
    policies: Path,
    json_report: Path | None,
    environment: str | None = None,
) -> int:
    from runtime.apply import apply_plan, plan_id_of, plan_steps
    from runtime.spark.session import SparkOptions

    if not is_saved_plan(path) and not auto_approve and not dry_run and not sys.stdin.isatty():
        # nobody can answer the question (CI, a pipe): refuse before reading anything, never an aborted prompt
        error(f"apply {path} asks for confirmation and there is no terminal to answer it; nothing was applied. "
              f"Apply a reviewed plan (tablepolicy plan {path} --out plan.json, then tablepolicy apply plan.json) "
              "or pass --auto-approve")
        return Exit.ERROR
    results: list[StepResult] = []
    run: ApplyInput | None = None
    try:
        run = apply_input(path, catalog, policies, environment)
        typer.echo(render_text(run.plan, lambda text, color: paint(text, color)), nl=False)
        if run.plan.blocked:
            blocked = "the plan holds destructive changes git has not approved; nothing was applied"
            error(blocked)
            if json_report is not None:
                json_report.write_text(failure_report(run, results, blocked), encoding="utf-8")
            return Exit.BLOCKED
        if not run.plan.has_changes:
            return Exit.OK
        if dry_run:
            show_statements(plan_steps(run.plan, plan_id_of(run.plan)))
            return Exit.OK
        if not run.saved and not auto_approve and not typer.confirm("Apply these changes?", default=False):
            error("apply cancelled")
            return Exit.ERROR

        def on_result(result: StepResult) -> None:
            results.append(result)
            show_step(result)

        # a saved plan is checked against the policies and the catalog first; Spark starts only once it passes
        report = apply_plan(run.plan, run.catalog, SparkOptions.from_flags(master, conf), journal_path=run.journal,
                            policies=run.policies, verify=run.saved, environment=run.environment,
                            on_result=on_result, on_notice=show_notice)
    except TablePolicyError as exc:  # CD's failure report says what ran and what is left (--json-report)
        if json_report is not None:
            json_report.write_text(failure_report(run, results, exc), encoding="utf-8")
        raise
    show_complete(report)
    if json_report is not None:
        json_report.write_text(report_json(report, run.catalog.summary(), plan_steps(run.plan, report.plan_id)),
                               encoding="utf-8")
    return Exit.OK


def failure_report(run: ApplyInput | None, results: list[StepResult], exc: TablePolicyError | str) -> str:
    """``--json-report`` of an apply that ended early (``exc``: the error, or why it stopped)."""
    from runtime.apply import plan_id_of, plan_steps
    from runtime.executor import ExecutionError

    if isinstance(exc, PolicyError):
        message = "; ".join(f"{d.location}: {d.code}: {d.message}" for d in exc.diagnostics.errors)
    else:
        message = str(exc)
    if run is None:
        return failure_json({}, None, [], results, message, step_failed=False)
    plan_id = plan_id_of(run.plan)
    return failure_json(run.catalog.summary(), plan_id, plan_steps(run.plan, plan_id), results, message,
                        step_failed=isinstance(exc, ExecutionError))


def apply_catalog(path: Path, catalog: str | None, policies: Path) -> CatalogConfig:
    """The catalog an apply targets: the flag, else the one a saved plan names, else the default."""
    if catalog is None and path.is_file() and path.suffix == ".json":
        try:
            document = jsontext.loads(path.read_text(encoding="utf-8"))
            catalog = document.get("catalog") if isinstance(document, dict) else None
        except (OSError, UnicodeDecodeError, ValueError):
            catalog = None  # apply itself reports what is wrong with the file
        if isinstance(catalog, dict):
            catalog = catalog.get("name")
        return resolve_catalog(catalog if isinstance(catalog, str) else None, policies)
    return resolve_catalog(catalog, path)


def import_tables(tables: list[str], namespaces: list[str], catalog: str | None, policies: Path, out: Path | None,
                  *, recursive: bool, force: bool) -> int:
    """Exact names, ``NS.*``/``NS.**`` patterns and ``--namespace`` select tables; each becomes a policy file under
    ``out`` (or, for exact names without ``out``, YAML on stdout). Nothing is written unless every table
    resolves and no file would be overwritten or declared twice."""
    selectors = import_selectors(tables, namespaces, recursive=recursive, out=out)
    config = resolve_catalog(catalog, policies)
    catalog_header(config, err=True)  # stdout may be the policy YAML
    with open_reader(config) as reader:
        exact = [s.name for s in selectors if isinstance(s, ExactTable)]
        loaded = {name: current.state for name in exact if (current := reader.table(name)) is not None}
        views = {name: view for name in exact if name not in loaded and reader.reads_views
                 and (view := reader.view(name)) is not None}
        listed = (reader.inventory() if len(loaded) + len(views) < len(selectors)
                  else Inventory(frozenset(), frozenset()))
        selection = select_tables(selectors, Inventory(listed.namespaces, listed.tables | set(loaded),
                                                       listed.views | set(views)))
        for problem in selection.problems:
            error(problem)
        if selection.problems:
            return Exit.ERROR
        documents: dict[tuple[str, ...], Callable[[str], str]] = {}
        for name in selection.tables:
            if name in views or (name in listed.views and name not in loaded):
                documents[name] = _view_document(views.get(name) or _current_view(reader, name))
            else:
                documents[name] = _table_document(loaded.get(name) or _current_state(reader, name))
    if out is None:
        for document in documents.values():
            typer.echo(document(""), nl=False)
        return Exit.OK
    return write_imported(documents, out, force=force)


def import_selectors(tables: list[str], namespaces: list[str], *, recursive: bool, out: Path | None) -> list[Selector]:
    """The flags of ``import`` checked together, before the catalog is opened."""
    if not tables and not namespaces:
        raise FlagError("import: name the tables (sales.orders, 'sales.*', 'sales.**') or give --namespace NS")
    if recursive and not namespaces:
        raise FlagError("--recursive applies to --namespace; with a pattern write 'sales.**'")
    try:
        selectors = [parse_selector(t) for t in tables]
        selectors += [namespace_selector(n, recursive=recursive) for n in namespaces]
    except ValueError as exc:
        raise FlagError(str(exc)) from None
    if out is None and any(isinstance(s, NamespaceTables) for s in selectors):
        raise FlagError("a namespace import writes one file per table: give --out DIR (e.g. --out policies/)")
    if out is not None and out.exists() and not out.is_dir():
        raise FlagError(f"--out {out}: is a file; give the policies folder to write the files under")
    return selectors


def _current_state(reader: CatalogReader, name: tuple[str, ...]) -> TableState:
    current = reader.table(name)
    if current is None:  # listed a moment ago: dropped while we read
        raise CatalogError(f"{format_name(name)} was dropped while it was being imported; run import again")
    return current.state


def _table_document(state: TableState) -> Callable[[str], str]:
    return lambda preamble: policy_yaml(state, preamble=preamble)


def _view_document(view: CurrentView) -> Callable[[str], str]:
    return lambda preamble: view_policy_yaml(view, preamble=preamble)


def _current_view(reader: CatalogReader, name: tuple[str, ...]) -> CurrentView:
    view = reader.view(name)
    if view is None:  # listed a moment ago: dropped while we read
        raise CatalogError(f"{format_name(name)} was dropped while it was being imported; run import again")
    return view


def write_imported(documents: dict[tuple[str, ...], Callable[[str], str]], out: Path, *, force: bool) -> int:
    """One file per table or view at ``out/NS/NAME.yaml`` (``documents``: its text given the editor schema header
    to start with); all or nothing."""
    from runtime.scaffold import SCHEMA_FILE, schema_header

    paths = find_project(out)
    try:
        targets = {name: policy_file(Path(os.path.abspath(out)), name) for name in documents}
    except ValueError as exc:
        error(str(exc))
        return Exit.ERROR
    problems = import_conflicts(targets, paths.scope, force=force)
    for problem in problems:
        error(problem)
    if problems:
        error("nothing was written")
        return Exit.ERROR
    for name, target in targets.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(documents[name](schema_header(target, paths.root)), encoding="utf-8")
        info(f"wrote {display_path(target)}")
    refused = _findings_in(paths.scope, set(targets.values()))
    show_diagnostics(refused)
    if not (paths.root / SCHEMA_FILE).exists():
        info(f"note: the files' editor header points at {display_path(paths.root / SCHEMA_FILE)}, which does not "
             f"exist; write it with: tablepolicy schema > {display_path(paths.root / SCHEMA_FILE)}")
    if refused.has_errors:  # an org rule the table breaks, or what the format cannot declare: the user edits git
        info("note: validate refuses the imported files as they are (above): edit them, or their namespace "
             "defaults, before you plan")
    return Exit.OK


def _findings_in(scope: Path, files: set[Path]) -> Diagnostics:
    """What validate says about ``files`` as part of the project at ``scope``."""
    from compiler.validate import validate as validate_project

    _, diagnostics = validate_project(scope)
    return Diagnostics([d for d in diagnostics.items if Path(os.path.abspath(d.location.file)) in files])


def import_conflicts(targets: dict[tuple[str, ...], Path], scope: Path, *, force: bool) -> list[str]:
    """Every reason the files cannot be written as they are: a file in the way (without ``force``), a table
    the project already declares in another file, two tables one case-insensitive file system would merge."""
    problems = [f"{display_path(t)} exists; pass --force to overwrite it" for t in targets.values()
                if t.exists() and not force]
    declared = _declared_tables(scope)
    problems += [f"{format_name(name)} is already declared in {declared[name]}" for name, target in targets.items()
                 if name in declared and Path(os.path.abspath(declared[name])) != target]
    folded: dict[str, list[tuple[str, ...]]] = {}
    for name, target in targets.items():
        folded.setdefault(str(target).casefold(), []).append(name)
    problems += [f"{' and '.join(format_name(n) for n in names)} would share one file on a case-insensitive file "
                 "system; import one of them without --out and save it under another file name"
                 for names in folded.values() if len(names) > 1]
    return problems


def _declared_tables(scope: Path) -> dict[tuple[str, ...], str]:
    """The tables and views the project at ``scope`` declares, by name, with the file declaring each."""
    if not scope.exists():
        return {}
    from compiler.validate import validate as validate_project

    project, _ = validate_project(scope)
    return {**{view.name: view.source.file for view in project.views},
            **{table.name: table.source.file for table in project.tables}}


def drift(path: Path, catalog: str | None, *, detailed_exitcode: bool, output: DriftFormat = DriftFormat.text,
          environment: str | None = None) -> int:
    """What the catalog holds that git does not say; unmanaged namespaces and tables are looked for when ``path``
    is the whole project. Exit CHANGES on drift with ``detailed_exitcode`` (unmanaged ones are never drift)."""
    target = resolve_target(path, catalog, environment)
    project = valid_project(path, environment=environment)
    typer.echo(target.header(), err=output is DriftFormat.json)  # JSON on stdout records the catalog itself
    with open_reader(target.catalog) as reader:
        result = plan_project(project, path, reader)
        desired = {state.name: state for state in desired_states(project)}
        inventory = None if isinstance(project, SelectedProject) else reader.inventory()
        found = find_drift(result.plan, reader, desired, project, inventory)
    match output:
        case DriftFormat.text:
            typer.echo(render_drift(found), nl=False)
        case DriftFormat.json:
            typer.echo(drift_json(found, target.catalog.summary(), target.environment_name), nl=False)
        case _:
            assert_never(output)
    return Exit.CHANGES if detailed_exitcode and found.drifted else Exit.OK
