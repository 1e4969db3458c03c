"""What each command does: call the compiler or runtime, hand results to the output, return an exit code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

import typer

import tablepolicy
from tablepolicy.compiler.desired import create_all
from tablepolicy.compiler.errors import PolicyError, TablePolicyError
from tablepolicy.compiler.loader import discover, display_path
from tablepolicy.compiler.paths import find_project
from tablepolicy.compiler.render.findings import findings_markdown
from tablepolicy.compiler.render.text import render_text
from tablepolicy.compiler.sql.statements import statements
from tablepolicy.runtime.caches.folder import cache_dir
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.invocation import Invocation, resolve_invocation

from .apply_output import failure_json, report_json, show_complete, show_notice, show_statements, show_step
from .exits import Exit
from .formats import DriftFormat, Format
from .output import (
    catalog_header,
    error,
    info,
    paint,
    render_plan,
    show_diagnostics,
    show_provenance,
    warning,
)

if TYPE_CHECKING:
    from tablepolicy.compiler.plan.model import Plan
    from tablepolicy.runtime.apply import StepResult


def init(directory: Path, *, install: str, force: bool) -> int:
    from tablepolicy.runtime.scaffold import Scaffold, ScaffoldError, retired_calls
    from tablepolicy.runtime.scaffold.source import InstallSourceError, install_line

    try:
        line = install_line(install, directory)
        outcomes = Scaffold(directory, line.spec, line.wheel).write(force=force)
    except (ScaffoldError, InstallSourceError) as exc:
        error(str(exc))
        return Exit.ERROR
    for outcome in outcomes:
        if outcome.note:
            warning(f"{outcome.action} {display_path(outcome.path)}: {outcome.note}")
        else:
            info(f"{outcome.action} {display_path(outcome.path)}")
    for stale in retired_calls(directory):  # the repository's other workflows, written by an earlier release
        warning(stale)
    info(f"Workflows install {line.spec!r} ({line.origin}; change with --install). Next: tablepolicy validate "
         f"{display_path(directory / 'policies')}, then open a pull request.")
    return Exit.OK


def ddl(path: Path, catalog: str | None, environment: str | None = None) -> int:
    run = tablepolicy.invocation(path, catalog=catalog, environment=environment)
    project, warnings = tablepolicy.api.load_project(run)
    show_diagnostics(warnings)
    name = run.catalog.name
    for change in create_all(project):
        for statement in statements(change, name):
            info(f"-- {change.summary}\n{statement.sql};\n")
    return Exit.OK


def schema() -> int:
    from tablepolicy.compiler.schema import policy_json_schema_text  # every model the schema covers: schema only

    typer.echo(policy_json_schema_text(), nl=False)
    return Exit.OK


def fmt(path: Path, *, check: bool, diff: bool = False) -> int:
    """Format (or with ``check``, list; with ``diff``, print the unified diff of) the policy files under ``path``.
    ``check`` and ``diff`` write nothing and exit ERROR when a file would change. A file that cannot be read or
    does not parse is left as it is and makes the exit code ERROR in every mode."""
    from tablepolicy.compiler.fmt import YAMLError, format_diff, format_text  # ruamel.yaml: only fmt needs it
    from tablepolicy.compiler.loader import not_utf8

    unformatted = broken = 0
    for file in discover(path):
        try:
            formatted = format_text(text := file.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:  # validate's finding (TP008): where, and what to do
            finding = not_utf8(display_path(file), file.read_bytes(), exc)
            example = "" if "UTF-16" in (finding.hint or "") else " (from Latin-1: iconv -f latin1 -t utf-8)"
            error(f"{display_path(file)}: not formatted, {finding.message} (line {finding.location.line}, column "
                  f"{finding.location.col}); {finding.hint}{example}, then run fmt again")
            broken += 1
            continue
        except YAMLError as exc:
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


def shown_path(path: Path) -> str:
    """``path`` relative to the working folder when it lies under it, else as it is."""
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def plan(
    path: Path, catalog: str | None, *, out: Path | None, output: Format, detailed_exitcode: bool, use_cache: bool,
    environment: str | None = None,
) -> int:
    run = tablepolicy.invocation(path, catalog=catalog, environment=environment)  # once: every step gets it
    header = run.target.header()
    if output is Format.json:
        typer.echo(header, err=True)  # stdout is the plan file, which records the catalog itself
    try:
        outcome = tablepolicy.plan(run, use_cache=use_cache)
    except PolicyError as exc:
        if output is not Format.markdown:
            raise
        # the pull-request comment of a plan that could not be made shows why, not nothing
        typer.echo(f"### tablepolicy plan · {header}\n\n**The plan could not be made:** fix these "
                   f"findings and push again.\n\n{findings_markdown(exc.diagnostics)}", nl=False)
        raise
    show_diagnostics(outcome.findings)  # warnings, e.g. approvals that approve nothing (TA101)
    typer.echo(render_plan(outcome.plan, output, header, outcome.findings), nl=False)
    show_provenance(outcome.plan.git_sha, shown_path(run.project.policies))
    if out is not None:
        tablepolicy.save_plan(outcome.plan, out)
        if outcome.plan.blocked:  # apply refuses it: say what would unblock it, not how to apply it
            typer.echo(f"Saved the plan to {out}; it holds destructive changes git has not approved, so apply "
                       "refuses it: approve them in the policies (or drop them), then plan again", err=True)
        else:
            typer.echo(f"Saved the plan to {out}; apply it with: tablepolicy apply {out}", err=True)
    if outcome.plan.blocked:
        return Exit.BLOCKED
    if detailed_exitcode and outcome.plan.has_changes:
        return Exit.CHANGES
    return Exit.OK


def show(path: Path, *, output: Format) -> int:
    """A saved plan in any format, as reviewed (Terraform's show): no catalog, no policies, nothing written."""
    saved = tablepolicy.load_plan(path)
    target = saved.catalog_ref
    where = f" · environment {saved.environment.name}" if saved.environment is not None else ""
    header = f"Catalog: {target.name} ({target.type or '?'}, {target.uri or '?'}){where} · saved plan {path}"
    typer.echo(render_plan(saved, output, header), nl=False)
    return Exit.OK


def is_saved_plan(path: Path) -> bool:
    """apply's argument names a plan file (saved by plan --out), not policies to plan now."""
    return path.is_file() and path.suffix == ".json"


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
    from tablepolicy.compiler.plan.steps import plan_id_of, plan_steps
    from tablepolicy.runtime.apply import applier

    if path.suffix == ".json" and path.is_dir():
        error(f"{display_path(path)} is a folder, not a saved plan: give the file tablepolicy plan --out wrote (or a "
              "policies folder to plan and apply now)")
        return Exit.ERROR
    saved = is_saved_plan(path)
    if not saved and not auto_approve and not dry_run and not sys.stdin.isatty():
        # nobody can answer the question (CI, a pipe): refuse before reading anything, never an aborted prompt
        error(f"apply {path} asks for confirmation and there is no terminal to answer it; nothing was applied. "
              f"Apply a reviewed plan (tablepolicy plan {path} --out plan.json, then tablepolicy apply plan.json) "
              "or pass --auto-approve")
        return Exit.ERROR
    results: list[StepResult] = []
    run: Invocation | None = None
    planned: Plan | None = None
    try:
        if saved:  # read once; its catalog and environment unless others are asked for
            planned = tablepolicy.load_plan(path)
            run = resolve_invocation(tablepolicy.api.project_of(policies), catalog, environment,
                                     saved_environment=planned.environment.name if planned.environment else None,
                                     saved_catalog=planned.catalog)
            catalog_header(run.target)
        else:
            run = tablepolicy.invocation(path, catalog=catalog, environment=environment)
            catalog_header(run.target)
            outcome = tablepolicy.plan(run)
            show_diagnostics(outcome.findings)
            planned = outcome.plan
        typer.echo(render_text(planned, lambda text, color: paint(text, color)), nl=False)
        if planned.blocked:
            blocked = "the plan holds destructive changes git has not approved; nothing was applied"
            error(blocked)
            if json_report is not None:
                json_report.write_text(failure_report(run, planned, results, blocked), encoding="utf-8")
            return Exit.BLOCKED
        if not planned.has_changes:
            return Exit.OK
        if dry_run:
            show_statements(plan_steps(planned, plan_id_of(planned), applier()))
            return Exit.OK
        if not saved and not auto_approve and not typer.confirm("Apply these changes?", default=False):
            error("apply cancelled")
            return Exit.ERROR

        def on_result(result: StepResult) -> None:
            results.append(result)
            show_step(result)

        journal = (path.with_name(path.name + ".journal") if saved
                   else cache_dir(run.project) / f"journal-{plan_id_of(planned)}.jsonl")
        # a saved plan is checked against the policies and the catalog first; Spark starts only once it passes
        report = tablepolicy.apply(planned, policies=run, spark_master=master,
                                   spark_conf=dict(item.split("=", 1) for item in conf), journal=journal,
                                   verify=saved, on_step=on_result, on_notice=show_notice)
    except TablePolicyError as exc:  # CD's failure report says what ran and what is left (--json-report)
        if json_report is not None:
            json_report.write_text(failure_report(run, planned, results, exc), encoding="utf-8")
        raise
    show_complete(report)
    if json_report is not None:
        json_report.write_text(report_json(report, run.catalog.summary(), plan_steps(planned, report.plan_id)),
                               encoding="utf-8")
    return Exit.OK


def failure_report(run: Invocation | None, planned: Plan | None, results: list[StepResult],
                   exc: TablePolicyError | str) -> str:
    """``--json-report`` of an apply that ended early (``exc``: the error, or why it stopped)."""
    from tablepolicy.compiler.plan.steps import plan_id_of, plan_steps
    from tablepolicy.runtime.executor import ExecutionError

    if isinstance(exc, PolicyError):
        message = "; ".join(f"{d.location}: {d.code}: {d.message}" for d in exc.diagnostics.errors)
    else:
        message = str(exc)
    if run is None or planned is None:
        return failure_json({}, None, [], results, message, step_failed=False)
    plan_id = plan_id_of(planned)
    return failure_json(run.catalog.summary(), plan_id, plan_steps(planned, plan_id), results, message,
                        step_failed=isinstance(exc, ExecutionError))


def import_tables(tables: list[str], namespaces: list[str], catalog: str | None, policies: Path, out: Path | None,
                  *, recursive: bool, force: bool) -> int:
    """tablepolicy.import_tables: the YAML on stdout (exact names without ``out``), or the files written."""
    from tablepolicy.runtime.importing import (  # ruamel.yaml (the YAML it writes): import only
        ImportRefused,
        import_selectors,
    )
    from tablepolicy.runtime.scaffold import SCHEMA_FILE

    import_selectors(tables, namespaces, recursive=recursive, out=out)  # the flags, before the catalog is opened
    config = resolve_catalog(catalog, policies)
    catalog_header(config, err=True)  # stdout may be the policy YAML
    try:
        imported = tablepolicy.import_tables(tables, namespaces=namespaces, recursive=recursive, catalog=config,
                                             policies=policies, out=out, force=force)
    except ImportRefused as exc:
        for problem in exc.problems:
            error(problem)
        if exc.conflicts:
            error("nothing was written")
        return Exit.ERROR
    if out is None:
        for document in imported.documents.values():
            typer.echo(document, nl=False)
        return Exit.OK
    for target in imported.written:
        info(f"wrote {display_path(target)}")
    show_diagnostics(imported.findings)
    root = find_project(out).root
    if not (root / SCHEMA_FILE).exists():
        info(f"note: the files' editor header points at {display_path(root / SCHEMA_FILE)}, which does not "
             f"exist; write it with: tablepolicy schema > {display_path(root / SCHEMA_FILE)}")
    if imported.findings.has_errors:  # an org rule the table breaks, or what the format cannot declare
        info("note: validate refuses the imported files as they are (above): edit them, or their namespace "
             "defaults, before you plan")
    return Exit.OK


def drift(path: Path, catalog: str | None, *, detailed_exitcode: bool, output: DriftFormat = DriftFormat.text,
          environment: str | None = None) -> int:
    """tablepolicy.drift rendered; exit CHANGES on drift with ``detailed_exitcode`` (unmanaged ones are never
    drift)."""
    from tablepolicy.compiler.render.drift import (  # its importer side loads ruamel.yaml: drift only
        drift_json,
        render_drift,
    )

    run = tablepolicy.invocation(path, catalog=catalog, environment=environment)
    target = run.target
    typer.echo(target.header(), err=output is DriftFormat.json)  # JSON on stdout records the catalog itself
    found = tablepolicy.drift(run).drift
    match output:
        case DriftFormat.text:
            typer.echo(render_drift(found), nl=False)
        case DriftFormat.json:
            typer.echo(drift_json(found, target.catalog.summary(), target.environment_name), nl=False)
        case _:
            assert_never(output)
    return Exit.CHANGES if detailed_exitcode and found.drifted else Exit.OK
