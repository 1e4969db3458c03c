"""``tablepolicy``: Iceberg tables declared in git. Each command is a few lines calling one function."""

from __future__ import annotations

import atexit
import gc
import os
import sys
import types
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from typer._click.core import Context as ClickContext  # typer 0.29 carries its own click
from typer._click.exceptions import BadParameter
from typer._click.formatting import HelpFormatter
from typer.core import TyperCommand, TyperGroup

from tablepolicy.compiler import __version__
from tablepolicy.compiler.errors import PolicyError, TablePolicyError
from tablepolicy.runtime.flags import check_master, check_output

from .completion import environment_names, table_names
from .exits import Exit
from .formats import DoctorFormat, DriftFormat, FindingsFormat, Format, HealthFormat, StatusFormat
from .output import error


class CommandList(TyperGroup):
    """The command list of ``--help`` shows each command's whole first sentence, wrapped to the terminal,
    not cut to what fits on one line with "..."."""

    def invoke(self, ctx: ClickContext) -> object:
        """A flag value typer's pydantic coercion refuses reads as click's own: "'xml' is not one of 'text', ...",
        without pydantic's "Value error, " in front."""
        try:
            return super().invoke(ctx)
        except BadParameter as exc:
            exc.message = exc.message.removeprefix("Value error, ")
            raise

    def format_commands(self, ctx: ClickContext, formatter: HelpFormatter) -> None:
        rows = [(name, command.get_short_help_str(limit=1000)) for name in self.list_commands(ctx)
                if (command := self.get_command(ctx, name)) is not None and not command.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


# Help is click's plain layout, not rich's panels: at 80 columns rich cuts option names ("--detailed-exitco…")
# and shows a <bool> placeholder for every flag. The plain layout wraps the help text and keeps names whole.
app = typer.Typer(
    cls=CommandList,
    name="tablepolicy",
    help="Apache Iceberg tables declared in git: validate, plan, apply, maintain.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=True,  # --install-completion / --show-completion; tablepolicy/cli/completion.py completes names
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

def show_version(value: bool) -> None:
    if value:
        typer.echo(f"tablepolicy {__version__}")
        raise typer.Exit()


def change_directory(value: Path | None) -> Path | None:
    """``-C DIR``: run as if started in DIR (git's -C, terraform's -chdir), before any path is read."""
    if value is not None:
        try:
            os.chdir(value)
        except OSError as exc:
            raise typer.BadParameter(f"cannot change to {value}: {exc.strerror or exc}") from None
    return value


@app.callback()
def root(
    version: Annotated[bool, typer.Option("--version", callback=show_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    chdir: Annotated[Path | None, typer.Option(
        "-C", "--chdir", metavar="DIR", callback=change_directory,
        help="Run as if started in DIR (before the command's paths are read).")] = None,
) -> None:
    """Apache Iceberg tables declared in git: validate, plan, apply, maintain."""


DEFAULT_POLICIES = Path("policies")


def project_policies(value: Path) -> Path:
    """The default ``policies`` from any folder of a project: where none is in the working directory, the
    project's found as git finds a repository (compiler.paths.locate_policies)."""
    if value == DEFAULT_POLICIES and not value.exists():
        from tablepolicy.compiler.paths import display_path, locate_policies

        found = locate_policies(Path.cwd())
        if found is not None:
            return Path(display_path(found))
    return value


PolicyPath = Annotated[Path, typer.Argument(help="A policies directory or one policy file (default: the project's "
                                                 "policies/, found from any folder inside it).",
                                            callback=project_policies)]
PoliciesOption = Annotated[Path, typer.Option(
    "--policies", help="Policies directory (locates the embedded catalog; default: the project's, found from any "
                       "folder inside it).", callback=project_policies)]
CatalogName = Annotated[
    str | None,
    typer.Option("--catalog", "-c", help="Catalog name in .pyiceberg.yaml / PYICEBERG_CATALOG__* (default: embedded)."),
]

EnvName = Annotated[
    str | None,
    typer.Option("--env", "-e", autocompletion=environment_names,
                 help="Environment overlay environments/NAME.yaml layered over the policies "
                      "(or TABLEPOLICY_ENV; default: none)."),
]

SparkMaster = Annotated[
    str, typer.Option("--spark-master", envvar="TABLEPOLICY_SPARK_MASTER", help="Spark master URL.")
]
SparkConf = Annotated[
    list[str] | None,
    typer.Option("--spark-conf", metavar="KEY=VALUE", help="Extra Spark setting key=value (repeatable)."),
]


LockTimeout = Annotated[
    str | None,
    typer.Option("--lock-timeout", metavar="DURATION", envvar="TABLEPOLICY_LOCK_TIMEOUT",
                 help="Wait this long (e.g. 30s, 10m, 1h) for a table another run holds, instead of stopping at once "
                      "(default: 0s)."),
]


def check_spark_conf(conf: list[str] | None) -> None:
    if conf and any("=" not in item for item in conf):
        raise typer.BadParameter("--spark-conf takes key=value")


def check_requests(requests: Path | None, table: str | None) -> None:
    """Exactly one source of requests: a file (or - for standard input) or the request table."""
    if (requests is None) == (table is None):
        raise typer.BadParameter("give exactly one of --requests FILE (- for standard input) and --requests-table "
                                 "NAMESPACE.TABLE")


def commands() -> types.ModuleType:
    """The command bodies, imported once a command runs: importing pyiceberg reads its configuration, whose
    errors must reach the user as one line (run checks it first), and --help stays fast."""
    from . import commands as module

    return module


def lifecycle() -> types.ModuleType:
    """health and maintain: table health reads pull in pyiceberg's table module, loaded on use."""
    from . import lifecycle as module

    return module


class CommandState:
    command_ran = False  # set once argument parsing succeeded and a command started


def lock_wait(text: str | None) -> float:
    """``--lock-timeout``'s seconds (a duration as the policies write them)."""
    if text is None:
        return 0.0
    from tablepolicy.compiler.policy.units import Duration

    try:
        return Duration.parse(text).millis / 1000
    except ValueError as exc:
        raise TablePolicyError(f"--lock-timeout: {exc}") from None


def run(
    action: Callable[[], int], *, outputs: dict[str, Path | None] | None = None, master: str | None = None,
    reach_master: bool = True, lock_timeout: str | None = None,
) -> None:
    """Run a command: flags checked before any work, clean one-line errors instead of tracebacks, exit codes
    from the README. ``outputs``: the output files by flag; ``master``: the Spark master the run would use;
    ``lock_timeout``: how long a run waits for a table another run holds."""
    CommandState.command_ran = True
    try:
        wait = lock_wait(lock_timeout)
        from tablepolicy.runtime.catalog.config import (  # on use: --help imports none
            configuration_given,
            configured_catalogs,
        )

        if configuration_given():  # a broken .pyiceberg.yaml is one line, before pyiceberg reads it on import
            configured_catalogs()
        for flag, target in (outputs or {}).items():
            check_output(flag, target)
        if master is not None:
            check_master(master, reach=reach_master)
        if lock_timeout is None:  # the default: no wait, and the lock machinery (pyiceberg's IO) stays unloaded
            code = action()
        else:
            from tablepolicy.runtime.lock import waiting_for_locks

            with waiting_for_locks(wait):
                code = action()
    except PolicyError as exc:
        from .output import show_diagnostics

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


@app.command()
def validate(
    path: PolicyPath = DEFAULT_POLICIES,
    output: Annotated[FindingsFormat, typer.Option(
        "--format", "-f", help="text (terminal), github (workflow annotations on the file and line) or json.")]
    = FindingsFormat.text,
    env: EnvName = None,
) -> None:
    """Check every policy file; print all findings as file:line:col. Exit 1 on any error."""
    from . import checking  # validate imports the policy models and checks, nothing of the planner

    run(lambda: checking.validate(path, output=output, environment=env))


@app.command()
def init(
    directory: Annotated[Path, typer.Argument(help="Where to create the policy repository.")] = Path("."),
    install: Annotated[str, typer.Option(
        "--install", help="The pinned requirement CI installs tablepolicy from (a version the package index "
                          "serves, git URL with a commit, or a path); never a bare name. Default: where this "
                          "tablepolicy came from, else its own wheel written into the repository.")] = "",
    force: Annotated[bool, typer.Option("--force", help="Replace tablepolicy's own files that differ (workflows, "
                                                        "schema, catalog template, wheel); no other file.")] = False,
) -> None:
    """Scaffold a policy repository: workflows, org rules, an example table, editor schema, pre-commit."""
    run(lambda: commands().init(directory, install=install, force=force))


@app.command()
def ddl(path: PolicyPath = DEFAULT_POLICIES, catalog: CatalogName = None, env: EnvName = None) -> None:
    """Print the Spark SQL that creates every declared table in an empty catalog (offline)."""
    run(lambda: commands().ddl(path, catalog, env))


@app.command()
def plan(
    path: PolicyPath = DEFAULT_POLICIES,
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
    env: EnvName = None,
) -> None:
    """Compare the policies with the live catalog (no JVM) and show what apply would do."""
    run(lambda: commands().plan(path, catalog, out=out, output=output, detailed_exitcode=detailed_exitcode,
                                use_cache=cache, environment=env), outputs={"--out": out})


@app.command()
def show(
    plan_file: Annotated[Path, typer.Argument(metavar="PLAN", help="A saved plan (tablepolicy plan --out FILE).")],
    output: Annotated[
        Format, typer.Option("--format", "-f", help="text (terminal), markdown (PR comment) or json (plan file).")
    ] = Format.text,
) -> None:
    """Print a saved plan in any format, checked as apply checks it, without a catalog or policies."""
    run(lambda: commands().show(plan_file, output=output))


@app.command()
def apply(
    path: Annotated[Path, typer.Argument(help="A saved plan (plan.json) or a policies directory.",
                                         callback=project_policies)] = DEFAULT_POLICIES,
    catalog: CatalogName = None,
    auto_approve: Annotated[bool, typer.Option("--auto-approve", help="Apply without asking.")] = False,
    spark_master: SparkMaster = "local[2]",
    spark_conf: SparkConf = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the SQL it would run; change nothing.")] = False,
    policies: Annotated[
        Path, typer.Option("--policies", help="Policies in git: approvals of destructive changes are checked here.",
                           callback=project_policies)
    ] = DEFAULT_POLICIES,
    json_report: Annotated[Path | None, typer.Option("--json-report", help="Write a JSON report of the run.")] = None,
    env: EnvName = None,
    lock_timeout: LockTimeout = None,
) -> None:
    """Apply a reviewed plan (or plan-and-apply policies) through Spark, step by step, resumably."""
    check_spark_conf(spark_conf)
    run(lambda: commands().apply(path, catalog, auto_approve=auto_approve, master=spark_master,
                                 conf=spark_conf or [], dry_run=dry_run, policies=policies, json_report=json_report,
                                 environment=env),
        outputs={"--json-report": json_report}, master=spark_master, reach_master=not dry_run,
        lock_timeout=lock_timeout)


@app.command()
def maintain(
    path: PolicyPath = DEFAULT_POLICIES,
    catalog: CatalogName = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what is due, its SQL and estimated effect; change "
                                                            "nothing.")] = False,
    spark_master: SparkMaster = "local[2]",
    spark_conf: SparkConf = None,
    json_report: Annotated[Path | None, typer.Option("--json-report", help="Write the before/after report (JSON).")]
    = None,
    output: Annotated[Format, typer.Option(
        "--format", "-f", help="The report on stdout: text, markdown (a PR or ticket) or json.")] = Format.text,
    table: Annotated[list[str] | None, typer.Option(
        "--table", "-t", metavar="TABLE", autocompletion=table_names,
        help="Only this declared table, e.g. logs.app_events (repeatable).")] = None,
    only: Annotated[list[str] | None, typer.Option(
        "--only", metavar="ACTION", help="Only this lifecycle action: retention, compaction, delete_files, "
                                         "manifests, snapshots, orphan_files (repeatable).")] = None,
    env: EnvName = None,
    lock_timeout: LockTimeout = None,
) -> None:
    """Run the maintenance the lifecycle policy makes due now: rewrites and retention deletes through Spark (started
    only when one is due), snapshot expiry and orphan removal without it."""
    check_spark_conf(spark_conf)
    run(lambda: lifecycle().maintain(path, catalog, dry_run=dry_run, master=spark_master, conf=spark_conf or [],
                                   json_report=json_report, output=output, tables=table or [],
                                   only=only or [], environment=env),
        outputs={"--json-report": json_report}, master=spark_master, reach_master=not dry_run,
        lock_timeout=lock_timeout)


def erasure() -> types.ModuleType:
    """erase and erase status: the requests file, the ledger and the certificate, loaded on use."""
    from . import erasure as module

    return module


class DefaultCommandGroup(TyperGroup):
    """``erase status ...`` runs the subcommand; anything else runs ``erase run ...``, so the command erase has
    always been (``tablepolicy erase policies/ --requests requests.yaml``) keeps working, --help included."""

    default = "run"

    def parse_args(self, ctx: ClickContext, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands:
            args = [self.default, *args]
        return super().parse_args(ctx, args)


class DefaultCommandContext(ClickContext):
    """The context of a group's default command is named as the group: ``tablepolicy erase``."""

    @property
    def command_path(self) -> str:
        return super().command_path.removesuffix(f" {self.info_name}")


class DefaultCommand(TyperCommand):
    """The default command of a DefaultCommandGroup: its usage line, --help and usage errors ("Try 'tablepolicy
    erase -h'") read as the group's own."""

    context_class = DefaultCommandContext


erase_app = typer.Typer(cls=DefaultCommandGroup, help="Erase data subjects' rows physically and prove it; "
                        "'erase status' shows where each request stands.", no_args_is_help=False,
                        rich_markup_mode=None)
app.add_typer(erase_app, name="erase")
RequestsFile = Annotated[Path | None, typer.Option(
    "--requests", "-r", help="An erasure requests file outside any git work tree: .yaml/.yml, .csv or .jsonl/.ndjson "
    "(by its extension); - reads standard input (its format by its first line).")]
RequestsTable = Annotated[str | None, typer.Option(
    "--requests-table", envvar="TABLEPOLICY_REQUESTS_TABLE", help="The request table in the catalog (e.g. "
    "privacy.erasure_requests): its pending rows are erased, then their keys replaced by fingerprints.")]


@erase_app.command("run", cls=DefaultCommand, hidden=True)
def erase(
    requests: RequestsFile = None,
    requests_table: RequestsTable = None,
    path: PolicyPath = DEFAULT_POLICIES,
    catalog: CatalogName = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Show which tables and rows it reaches, the statements, and the cost: the files it will read "
        "after pruning and rewrite, and where; change nothing.")] = False,
    proof: Annotated[Path | None, typer.Option("--proof", help="Write the proof of erasure (JSON) here.")] = None,
    spark_master: SparkMaster = "local[2]",
    spark_conf: SparkConf = None,
    env: EnvName = None,
    debris_min_age: Annotated[str | None, typer.Option(
        "--debris-min-age", help="Delete unreadable files no snapshot reads only when older than this (e.g. 0s, 1h, "
        "3d; default: the table's orphan_files.older_than, else 3d). 0s only when no writer can be running.")]
    = None,
    cluster_above: Annotated[str | None, typer.Option(
        "--cluster-above", help="With a cluster --spark-master, a table whose files list more than this (e.g. 50GB) "
        "is surveyed and proven by the executors (default: the table's lifecycle.erasure.cluster_above, else "
        "10GiB).")] = None,
    lock_timeout: LockTimeout = None,
    output: Annotated[StatusFormat, typer.Option(
        "--format", "-f", help="text, or json: on stdout, the dry run's tables (what holds the keys, the statements, "
        "the cost) or the run's proof document; progress goes to stderr.")] = StatusFormat.text,
    no_prune: Annotated[bool, typer.Option(
        "--no-prune", help="Read the key columns of every file, in the survey and the proof alike: no file excluded by "
        "manifest bounds, row-group statistics or bloom filters (for audits, and the baseline of benchmarks).")]
    = False,
) -> None:
    """Erase data subjects' rows physically (delete, rewrite, expire) from tables that declare erasure; prove it,
    record it in the request ledger (requests done earlier are skipped) and print a certificate.

    'tablepolicy erase status [PATH]' lists each request: done, pending, held or OVERDUE.
    """
    check_spark_conf(spark_conf)
    check_requests(requests, requests_table)
    run(lambda: erasure().erase(path, requests, catalog, dry_run=dry_run, proof=proof, master=spark_master,
                                conf=spark_conf or [], environment=env, debris_age=debris_min_age,
                                requests_table=requests_table, prune=not no_prune, cluster_above=cluster_above,
                                output=output),
        outputs={"--proof": proof}, master=spark_master, reach_master=not dry_run, lock_timeout=lock_timeout)


@erase_app.command("status")
def erase_status(
    path: PolicyPath = DEFAULT_POLICIES,
    catalog: CatalogName = None,
    requests: Annotated[Path | None, typer.Option(
        "--requests", "-r", help="Also list this file's requests the ledger does not know yet (as pending).")]
    = None,
    requests_table: RequestsTable = None,
    output: Annotated[StatusFormat, typer.Option("--format", "-f", help="text or json.")] = StatusFormat.text,
    env: EnvName = None,
) -> None:
    """Each erasure request from the ledger (no JVM): done with its proof, pending, held or OVERDUE (received +
    lifecycle.erasure.within has passed). Exit 1 if any request is overdue."""
    if requests is not None and requests_table is not None:
        check_requests(requests, requests_table)
    run(lambda: erasure().status(path, catalog, requests_file=requests, output=output, environment=env,
                                 requests_table=requests_table))


@app.command()
def health(
    path: PolicyPath = DEFAULT_POLICIES,
    catalog: CatalogName = None,
    output: Annotated[HealthFormat, typer.Option("--format", "-f", help="Output format.")] = HealthFormat.text,
    html: Annotated[Path | None, typer.Option("--html", help="Also write a self-contained HTML report here.")]
    = None,
    env: EnvName = None,
) -> None:
    """Table health read from metadata (snapshots, files, small files, deletes, manifests) and what is due."""
    run(lambda: lifecycle().health(path, catalog, output=output, html=html, environment=env),
        outputs={"--html": html})


@app.command()
def doctor(
    path: PolicyPath = DEFAULT_POLICIES,
    catalog: CatalogName = None,
    write_probe: Annotated[bool, typer.Option(
        "--write-probe", help="Also write one small object under the warehouse, read it back and delete it.")]
    = False,
    spark_master: Annotated[str | None, typer.Option(
        "--spark-master", envvar="TABLEPOLICY_SPARK_MASTER", help="Also check this Spark master (spark://host:port: "
        "its port answers).")] = None,
    output: Annotated[DoctorFormat, typer.Option("--format", "-f", help="text or json.")] = DoctorFormat.text,
    env: EnvName = None,
) -> None:
    """Check this machine's setup for the catalog: configuration, connection, warehouse, Java, Spark and its jars
    (no JVM started). A line each, ✓ or ✗ with the fix; exit 1 on any ✗."""
    def act() -> int:  # imported once run has checked the catalog configuration pyiceberg reads on import
        from .doctor import doctor as run_doctor

        return run_doctor(path, catalog, environment=env, write_probe=write_probe, master=spark_master,
                          output=output)

    run(act)


@app.command()
def unlock(
    table: Annotated[str, typer.Argument(help="The locked table, e.g. logs.app_events.")],
    catalog: CatalogName = None,
    policies: PoliciesOption = DEFAULT_POLICIES,
    force: Annotated[bool, typer.Option("--force", help="Also take over a live run's lock (dangerous).")] = False,
) -> None:
    """Show who holds a table's lock; take over a dead run's lock (exit 1 if there was none to take)."""
    def act() -> int:  # imported once run has checked the catalog configuration pyiceberg reads on import
        from .unlock import unlock as unlock_table

        return unlock_table(table, catalog, policies, force=force)

    run(act)


@app.command()
def drift(
    path: PolicyPath = DEFAULT_POLICIES,
    catalog: CatalogName = None,
    detailed_exitcode: Annotated[bool, typer.Option(
        "--detailed-exitcode", help="Exit 0 no drift, 2 drift, 1 error (unmanaged tables are not drift).")] = False,
    output: Annotated[DriftFormat, typer.Option(
        "--format", "-f", help="text (terminal) or json (for scripts and monitoring).")] = DriftFormat.text,
    env: EnvName = None,
) -> None:
    """Show what the catalog holds that git does not say (the reverse of plan), and the namespaces and tables git
    never mentions."""
    run(lambda: commands().drift(path, catalog, detailed_exitcode=detailed_exitcode, output=output,
                                 environment=env))


@app.command()
def history(
    table: Annotated[str, typer.Argument(help="The table, e.g. sales.orders.", autocompletion=table_names)],
    catalog: CatalogName = None,
    policies: PoliciesOption = DEFAULT_POLICIES,
    output: Annotated[DriftFormat, typer.Option("--format", "-f", help="text or json.")] = DriftFormat.text,
) -> None:
    """Which plan, git commit and user changed a table and when (apply's stamps), with the snapshots that wrote its
    data (no JVM)."""
    def act() -> int:  # imported once run has checked the catalog configuration pyiceberg reads on import
        from .history import history as show_history

        return show_history(table, catalog, policies, output=output)

    run(act)


@app.command("import")
def import_(
    tables: Annotated[list[str] | None, typer.Argument(
        metavar="TABLE", help="Tables to import: sales.orders; 'sales.*' (the tables of sales); 'sales.**' (and "
                              "nested namespaces).")]
    = None,
    namespace: Annotated[list[str] | None, typer.Option(
        "--namespace", "-n", metavar="NAMESPACE",
        help="Import every table of this namespace (repeatable); needs --out.")] = None,
    recursive: Annotated[bool, typer.Option(
        "--recursive", "-r", help="With --namespace: also the tables of its nested namespaces.")] = False,
    catalog: CatalogName = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write policy files under this directory.")] = None,
    policies: PoliciesOption = DEFAULT_POLICIES,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing policy files.")] = False,
) -> None:
    """Write policy YAML for existing catalog tables; plan right after shows no changes."""
    run(lambda: commands().import_tables(tables or [], namespace or [], catalog, policies, out, recursive=recursive,
                                         force=force))


@app.command()
def schema() -> None:
    """Print the JSON Schema of the policy format (for editors and CI)."""
    run(lambda: commands().schema())


@app.command()
def fmt(
    path: PolicyPath = DEFAULT_POLICIES,
    check: Annotated[bool, typer.Option("--check", help="Only list files that are not formatted (exit 1).")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Print what would change as a unified diff; write nothing "
                                                      "(exit 1 when a file would change).")] = False,
) -> None:
    """Rewrite policy files in canonical form; comments are kept."""
    run(lambda: commands().fmt(path, check=check, diff=diff))


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"


@app.command()
def completion(shell: Annotated[Shell, typer.Argument(help="The shell: bash, zsh, fish or powershell.")]) -> None:
    """Print the completion script for SHELL, e.g. eval "$(tablepolicy completion bash)" in ~/.bashrc.
    Unlike --show-completion, it never guesses the shell from the process that started it."""
    from typer._completion_shared import get_completion_script  # typer's own scripts, the ones it installs

    typer.echo(get_completion_script(prog_name="tablepolicy", complete_var="_TABLEPOLICY_COMPLETE", shell=shell.value))


github_app = typer.Typer(no_args_is_help=True, help="The GitHub side of the policy workflows (the scaffolded "
                         "workflows run these): the pull request's sticky plan comment, the plan reviewed for a merge "
                         "commit, why an apply failed. Reads GITHUB_TOKEN and the runner's GITHUB_* variables.")
app.add_typer(github_app, name="github")


def github_run(*argv: str) -> None:
    from tablepolicy.runtime.github import main as github_main  # standard library only: urllib, json

    raise typer.Exit(github_main(list(argv)))


@github_app.command("comment")
def github_comment(
    pr: Annotated[int, typer.Option("--pr", help="The pull request number.")],
    file: Annotated[Path, typer.Option("--file", help="The comment's body (plan --format markdown).")],
    errors: Annotated[Path | None, typer.Option("--errors", help="The command's stderr: shown when it ended "
                                                  "with an error.")] = None,
    marker: Annotated[str, typer.Option("--marker", help="Which sticky comment to update.")] = "tablepolicy-plan",
) -> None:
    """Create or update the pull request's sticky comment."""
    github_run("comment", "--pr", str(pr), "--file", str(file), *(["--errors", str(errors)] if errors else []),
               "--marker", marker)


@github_app.command("reviewed-plan")
def github_reviewed_plan(
    commit: Annotated[str, typer.Option("--commit", help="The merge commit.")],
    workflow: Annotated[str, typer.Option("--workflow", help="The plan workflow's file.")] = "tablepolicy-plan.yml",
) -> None:
    """The pull request and plan behind a merge commit."""
    github_run("reviewed-plan", "--commit", commit, "--workflow", workflow)


@github_app.command("apply-failed")
def github_apply_failed(
    pr: Annotated[int, typer.Option("--pr", help="The pull request number.")],
    commit: Annotated[str, typer.Option("--commit", help="The merge commit.")],
    step: Annotated[list[str] | None, typer.Option("--step", metavar="ID=OUTCOME",
                                                      help="Each step's outcome (install, reviewed, download, "
                                                      "apply).")] = None,
    run_id: Annotated[str, typer.Option("--run-id", help="The reviewed plan run.")] = "",
    artifact: Annotated[str, typer.Option("--artifact", help="The reviewed plan's artifact name.")] = "",
    reviewed_error: Annotated[str, typer.Option("--reviewed-error")] = "",
    report: Annotated[Path, typer.Option("--report")] = Path("apply-report.json"),
    log: Annotated[Path, typer.Option("--log")] = Path("apply.log"),
) -> None:
    """Say on the pull request why the apply job failed."""
    steps = [arg for item in step or [] for arg in ("--step", item)]
    github_run("apply-failed", "--pr", str(pr), "--commit", commit, *steps, "--run-id", run_id, "--artifact",
               artifact, "--reviewed-error", reviewed_error, "--report", str(report), "--log", str(log))


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


# Flags that choose what a run targets: given twice with different values, the last would silently win.
TARGET_FLAGS = {"--catalog": "-c", "--env": "-e"}


def repeated_target(argv: list[str]) -> str | None:
    """The error for a target flag given twice with different values (``--catalog a --catalog b``), else None.

    >>> repeated_target(["plan", "--catalog", "a", "-c", "b"])
    "--catalog given twice ('a', 'b'): a run targets one; give it once"
    """
    words = argv[:argv.index("--")] if "--" in argv else argv
    for long, short in TARGET_FLAGS.items():
        values = []
        for at, word in enumerate(words):
            if word in (long, short) and at + 1 < len(words):
                values.append(words[at + 1])
            elif word.startswith(f"{long}="):
                values.append(word.split("=", 1)[1])
            elif word.startswith(short) and len(word) > 2 and not word.startswith("--"):
                values.append(word[2:].removeprefix("="))
        if len(set(values)) > 1:
            return f"{long} given twice ({', '.join(repr(v) for v in values)}): a run targets one; give it once"
    return None


# At exit, what is alive is moved out of the cyclic collector's reach (gc.freeze) before the interpreter's last
# collections: they walked the 200,000 objects of pyiceberg, pydantic and SQLAlchemy and a run's manifests for 0.3 to
# 0.5 s of a 3 to 5 s erase, to free memory the process gives back anyway. Registered once, at exit only: a test or a
# program calling main() many times keeps collecting as before.
atexit.register(gc.freeze)


def main() -> None:
    """Usage errors exit 1, not click's 2: with --detailed-exitcode, 2 means "the plan has changes", and a
    mistyped flag in CI must not read as that. A 2 from before any command ran is click's usage error."""
    if (repeated := repeated_target(sys.argv[1:])) is not None:
        error(repeated)
        sys.exit(Exit.ERROR)
    # pydantic looks for plugins in every installed package's entry points when it builds the first model (10 ms of
    # a 0.3 s validate); the command line uses none. Set to anything, the variable is the user's and is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        app(prog_name="tablepolicy")
    except SystemExit as exc:
        if exc.code == Exit.CHANGES and not CommandState.command_ran:
            sys.exit(Exit.ERROR)
        raise


if __name__ == "__main__":
    main()
