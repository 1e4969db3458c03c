"""``tablepolicy``: Iceberg tables declared in git. Each command is a few lines calling one function."""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from compiler import __version__
from compiler.catalog.config import configured_catalogs
from compiler.errors import PolicyError, TablePolicyError
from runtime.cli.exits import Exit
from runtime.cli.flags import check_master, check_output
from runtime.cli.views import error

app = typer.Typer(
    name="tablepolicy",
    help="Apache Iceberg tables declared in git: validate, plan, apply, maintain.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=False,
    pretty_exceptions_enable=False,
)

PolicyPath = Annotated[Path, typer.Argument(help="A policies directory or one policy file.")]
CatalogName = Annotated[
    str | None,
    typer.Option("--catalog", "-c", help="Catalog name in .pyiceberg.yaml / PYICEBERG_CATALOG__* (default: embedded)."),
]


SparkMaster = Annotated[
    str, typer.Option("--spark-master", envvar="TABLEPOLICY_SPARK_MASTER", help="Spark master URL.")
]
SparkConf = Annotated[
    list[str] | None, typer.Option("--spark-conf", help="Extra Spark setting key=value (repeatable).")
]


def check_spark_conf(conf: list[str] | None) -> None:
    if conf and any("=" not in item for item in conf):
        raise typer.BadParameter("--spark-conf takes key=value")


class Format(StrEnum):
    text = "text"
    markdown = "markdown"
    json = "json"


def commands() -> types.ModuleType:
    """The command bodies, imported once a command runs: importing pyiceberg reads its configuration, whose
    errors must reach the user as one line (run checks it first), and --help stays fast."""
    from runtime.cli import commands as module

    return module


def lifecycle() -> types.ModuleType:
    """health, maintain and erase: table health reads pull in pyiceberg's table module, loaded on use."""
    from runtime.cli import lifecycle as module

    return module


class Invocation:
    command_ran = False  # set once argument parsing succeeded and a command started


def run(
    action: Callable[[], int], *, outputs: dict[str, Path | None] | None = None, master: str | None = None,
    reach_master: bool = True,
) -> None:
    """Run a command: flags checked before any work, clean one-line errors instead of tracebacks, exit codes
    from the README. ``outputs``: the output files by flag; ``master``: the Spark master the run would use."""
    Invocation.command_ran = True
    try:
        configured_catalogs()  # a broken .pyiceberg.yaml is one line, before pyiceberg reads it on import
        for flag, target in (outputs or {}).items():
            check_output(flag, target)
        if master is not None:
            check_master(master, reach=reach_master)
        code = action()
    except PolicyError as exc:
        from runtime.cli.views import show_diagnostics

        show_diagnostics(exc.diagnostics)
        code = Exit.ERROR
    except TablePolicyError as exc:
        error(str(exc))
        code = Exit.ERROR
    except BrokenPipeError:  # output piped into head(1) and closed: not an error of ours
        sys.stderr.close()
        code = Exit.OK
    except KeyboardInterrupt:
        error("interrupted")
        code = Exit.ERROR
    except Exception as exc:
        if os.environ.get("TABLEPOLICY_DEBUG"):
            raise
        error(f"internal error: {type(exc).__name__}: {exc} (set TABLEPOLICY_DEBUG=1 for a traceback)")
        code = Exit.ERROR
    raise typer.Exit(int(code))


class FindingsFormat(StrEnum):
    text = "text"
    github = "github"
    json = "json"


@app.command()
def validate(
    path: PolicyPath = Path("policies"),
    output: Annotated[FindingsFormat, typer.Option(
        "--format", "-f", help="text (terminal), github (workflow annotations on the file and line) or json.")]
    = FindingsFormat.text,
) -> None:
    """Check every policy file; print all findings as file:line:col. Exit 1 on any error."""
    run(lambda: commands().validate(path, output=output.value))


@app.command()
def init(
    directory: Annotated[Path, typer.Argument(help="Where to create the policy repository.")] = Path("."),
    install: Annotated[str, typer.Option(
        "--install", help="The pinned requirement CI installs tablepolicy from (a version, git URL with a commit, "
                          "or a path); never a bare name.")] = "",
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")] = False,
) -> None:
    """Scaffold a policy repository: workflows, org rules, an example table, editor schema, pre-commit."""
    run(lambda: commands().init(directory, install=install, force=force))


@app.command()
def ddl(path: PolicyPath = Path("policies"), catalog: CatalogName = None) -> None:
    """Print the Spark SQL that creates every declared table in an empty catalog (offline)."""
    run(lambda: commands().ddl(path, catalog))


@app.command()
def plan(
    path: PolicyPath = Path("policies"),
    catalog: CatalogName = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Also save the plan file (JSON) for apply.")] = None,
    output: Annotated[
        Format, typer.Option("--format", "-f", help="text (terminal), markdown (PR comment) or json (plan file).")
    ] = Format.text,
    detailed_exitcode: Annotated[
        bool, typer.Option("--detailed-exitcode", help="Exit 0 no changes, 2 changes, 1 error, 3 blocked.")
    ] = False,
    cache: Annotated[
        bool, typer.Option("--cache/--no-cache", help="Reuse plans of tables whose policy and metadata are unchanged.")
    ] = True,
) -> None:
    """Compare the policies with the live catalog (no JVM) and show what apply would do."""
    run(lambda: commands().plan(path, catalog, out=out, output=output.value, detailed_exitcode=detailed_exitcode,
                                use_cache=cache), outputs={"--out": out})


@app.command()
def apply(
    path: Annotated[Path, typer.Argument(help="A saved plan (plan.json) or a policies directory.")] = Path("policies"),
    catalog: CatalogName = None,
    auto_approve: Annotated[bool, typer.Option("--auto-approve", help="Apply without asking.")] = False,
    spark_master: SparkMaster = "local[2]",
    spark_conf: SparkConf = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the SQL it would run; change nothing.")] = False,
    policies: Annotated[
        Path, typer.Option("--policies", help="Policies in git: approvals of destructive changes are checked here.")
    ] = Path("policies"),
    json_report: Annotated[Path | None, typer.Option("--json-report", help="Write a JSON report of the run.")] = None,
) -> None:
    """Apply a reviewed plan (or plan-and-apply policies) through Spark, step by step, resumably."""
    check_spark_conf(spark_conf)
    run(lambda: commands().apply(path, catalog, auto_approve=auto_approve, master=spark_master,
                                 conf=spark_conf or [], dry_run=dry_run, policies=policies, json_report=json_report),
        outputs={"--json-report": json_report}, master=spark_master, reach_master=not dry_run)


@app.command()
def maintain(
    path: PolicyPath = Path("policies"),
    catalog: CatalogName = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what is due and its SQL; change nothing.")] = False,
    spark_master: SparkMaster = "local[2]",
    spark_conf: SparkConf = None,
    json_report: Annotated[Path | None, typer.Option("--json-report", help="Write a JSON report of the run.")] = None,
) -> None:
    """Run the maintenance lifecycle policy makes due now (expiry, retention, compaction, orphans) through Spark."""
    check_spark_conf(spark_conf)
    run(lambda: lifecycle().maintain(path, catalog, dry_run=dry_run, master=spark_master, conf=spark_conf or [],
                                   json_report=json_report),
        outputs={"--json-report": json_report}, master=spark_master, reach_master=not dry_run)


@app.command()
def erase(
    requests: Annotated[Path, typer.Option("--requests", "-r", help="The erasure requests file (YAML).")],
    path: PolicyPath = Path("policies"),
    catalog: CatalogName = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show which tables and rows it reaches; change nothing.")]
    = False,
    proof: Annotated[Path | None, typer.Option("--proof", help="Write the proof of erasure (JSON) here.")] = None,
    spark_master: SparkMaster = "local[2]",
    spark_conf: SparkConf = None,
) -> None:
    """Erase data subjects' rows physically (delete, rewrite, expire) from tables that declare erasure; prove it."""
    check_spark_conf(spark_conf)
    run(lambda: lifecycle().erase(path, requests, catalog, dry_run=dry_run, proof=proof, master=spark_master,
                                conf=spark_conf or []),
        outputs={"--proof": proof}, master=spark_master, reach_master=not dry_run)


class HealthFormat(StrEnum):
    text = "text"
    json = "json"


@app.command()
def health(
    path: PolicyPath = Path("policies"),
    catalog: CatalogName = None,
    output: Annotated[HealthFormat, typer.Option("--format", "-f", help="Output format.")] = HealthFormat.text,
    html: Annotated[Path | None, typer.Option("--html", help="Also write a self-contained HTML report here.")]
    = None,
) -> None:
    """Table health read from metadata (snapshots, files, small files, deletes, manifests) and what is due."""
    run(lambda: lifecycle().health(path, catalog, output=output.value, html=html), outputs={"--html": html})


@app.command()
def unlock(
    table: Annotated[str, typer.Argument(help="The locked table, e.g. logs.app_events.")],
    catalog: CatalogName = None,
    policies: Annotated[Path, typer.Option(help="Policies directory (locates the embedded catalog).")] = Path(
        "policies"
    ),
    force: Annotated[bool, typer.Option("--force", help="Also take over a live run's lock (dangerous).")] = False,
) -> None:
    """Show who holds a table's lock; take over a dead run's lock (exit 1 if there was none to take)."""
    def act() -> int:  # imported once run has checked the catalog configuration pyiceberg reads on import
        from runtime.cli.unlock import unlock as unlock_table

        return unlock_table(table, catalog, policies, force=force)

    run(act)


@app.command()
def drift(
    path: PolicyPath = Path("policies"),
    catalog: CatalogName = None,
    detailed_exitcode: Annotated[bool, typer.Option("--detailed-exitcode", help="Exit 2 when there is drift.")] = False,
) -> None:
    """Show what the catalog holds that git does not say (the reverse of plan)."""
    run(lambda: commands().drift(path, catalog, detailed_exitcode=detailed_exitcode))


@app.command("import")
def import_(
    tables: Annotated[list[str], typer.Argument(help="Tables to import, e.g. sales.orders.")],
    catalog: CatalogName = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write policy files under this directory.")] = None,
    policies: Annotated[Path, typer.Option(help="Policies directory (locates the embedded catalog).")] = Path(
        "policies"
    ),
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing policy files.")] = False,
) -> None:
    """Write policy YAML for existing catalog tables; plan right after shows no changes."""
    run(lambda: commands().import_tables(tables, catalog, policies, out, force=force))


@app.command()
def schema() -> None:
    """Print the JSON Schema of the policy format (for editors and CI)."""
    run(lambda: commands().schema())


@app.command()
def fmt(
    path: PolicyPath = Path("policies"),
    check: Annotated[bool, typer.Option("--check", help="Only report files that are not formatted (exit 1).")] = False,
) -> None:
    """Rewrite policy files in canonical form; comments are kept."""
    run(lambda: commands().fmt(path, check=check))


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main() -> None:
    """Usage errors exit 1, not click's 2: with --detailed-exitcode, 2 means "the plan has changes", and a
    mistyped flag in CI must not read as that. A 2 from before any command ran is click's usage error."""
    try:
        app(prog_name="tablepolicy")
    except SystemExit as exc:
        if exc.code == Exit.CHANGES and not Invocation.command_ran:
            sys.exit(Exit.ERROR)
        raise


if __name__ == "__main__":
    main()
