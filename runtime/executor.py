"""Run the steps of a plan in Spark; a failure becomes an ExecutionError naming the step, never a traceback.

Every step is prepared before any runs (``check_steps``): its SQL parsed by Spark's own parser, its API
request built, so nothing is committed to a table before every statement for it is known to be well
formed. A create runs as one atomic commit through the Iceberg catalog API of the session's catalog
plugin (spec 0, sort order and identifier fields as declared), a multi-field partition evolution as one
UpdatePartitionSpec commit, a ref's retention as one metadata commit that never moves the ref; everything
else as the plan's SQL, with Spark resolving names case-sensitively: tablepolicy spells every name exactly
as the catalog or the policy does, and a ``case_sensitive: true`` table may hold names that differ only by case.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar
from weakref import WeakKeyDictionary

from tablepolicy.compiler.diff import changes
from tablepolicy.compiler.diff.changes import Change
from tablepolicy.compiler.errors import TablePolicyError
from tablepolicy.compiler.model.table import PartitionFieldState, iceberg_json
from tablepolicy.compiler.sql.filters import ident
from tablepolicy.compiler.sql.statements import partition_spec_statements, replace_ref_statement

from .redaction import redact
from .spark.iceberg_catalog import iceberg_catalog, table_identifier
from .spark.sqlite_pool import renew_connections

Result = TypeVar("Result")
COMMIT_ATTEMPTS = 8
# commit conflicts with concurrent writers that leave the table unchanged and are safe to retry
TRANSIENT = re.compile(r"SQLITE_BUSY|database is locked|CommitFailedException|could not serialize|deadlock")
# Iceberg's ValidationExceptions when a concurrent commit rewrote, deleted from or dropped the same files or
# manifests (a writer's append drops the deleted-only manifests a compaction left, which a manifest rewrite
# planned to replace): the step changed nothing, and one that reads the table afresh can run again
CONFLICT = re.compile(r"Found conflicting (delete )?files|Found new conflicting delete files|"
                      r"Missing required files to delete|Cannot commit, found new delete for replaced data file|"
                      r"Deleted manifest .* could not be found in the latest snapshot")
CONFLICT_ATTEMPTS = 20


class ExecutionError(TablePolicyError):
    """A step failed in Spark; the message names the change and the statement.

    The message is masked as it is built (runtime/redaction.py): Spark's and Py4J's text may hold a key, a
    password or a location with credentials, and every report, journal, proof and error line takes its text
    from here."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


CASE_SENSITIVE = "spark.sql.caseSensitive"


class Prepared(Protocol):
    """A step of a plan: the change and the SQL string the plan shows for it."""

    @property
    def change(self) -> Change: ...

    @property
    def sql(self) -> str: ...

    @property
    def summary(self) -> str: ...

    @property
    def index(self) -> int: ...


def check_steps(spark: Any, catalog: str, steps: Iterable[Prepared]) -> None:
    """Prepare every step before any runs; the first that cannot run is refused, naming it."""
    for step in steps:
        prepare(spark, catalog, step.change, step.sql, f"step {step.index} ({step.summary})")


def execute(spark: Any, catalog: str, change: Change, sql: str, what: str,
            landed: Callable[[], bool] = lambda: False) -> None:
    """Run one step, retrying a commit that lost a race with another writer (see with_commit_retries)."""
    run = prepare(spark, catalog, change, sql, what)
    with_commit_retries(spark, run, landed)


def prepare(spark: Any, catalog: str, change: Change, sql: str, what: str) -> Callable[[], None]:
    """Check a step without running it and return what runs it."""
    try:
        match change:
            case changes.CreateTable():
                _parse(spark, sql)  # the plan's review form: it must stay valid Spark SQL
                return _create_table(spark, catalog, change, sql, what)
            case changes.UpdatePartitionSpec():
                for statement in partition_spec_statements(change, catalog):
                    _parse(spark, statement)
                return lambda: guard(what, sql, lambda: _update_spec(spark, catalog, change))
            case changes.SetRefRetention():
                _parse(spark, replace_ref_statement(sql))
                return lambda: guard(what, sql, lambda: _set_ref_retention(spark, catalog, change))
            case changes.CreateView() | changes.ReplaceView():
                parsed = _parse(spark, sql)
                return lambda: _run_in_catalog(spark, catalog, lambda: _run_parsed(spark, parsed, sql, what))
            case _:
                parsed = _parse(spark, sql)
                return lambda: _run_case_sensitive(spark, lambda: _run_parsed(spark, parsed, sql, what))
    except ExecutionError:
        raise
    except Exception as exc:
        raise ExecutionError(f"{what} cannot run, nothing of it was applied: {_reason(exc)}\n"
                             f"  statement: {sql}") from None


def _run_case_sensitive(spark: Any, run: Callable[[], None]) -> None:
    with case_sensitive(spark):
        run()


def _run_in_catalog(spark: Any, catalog: str, run: Callable[[], None]) -> None:
    """A view's statement with the plan's catalog current: Spark resolves the names of its SELECT (written
    namespace.table, as policies name tables) in that catalog, and the view records it as its default. The
    session's current catalog is restored after."""
    previous = spark.catalog.currentCatalog()
    spark.catalog.setCurrentCatalog(catalog)
    try:
        _run_case_sensitive(spark, run)
    finally:
        spark.catalog.setCurrentCatalog(previous)


class _Engine:
    """Spark's SQL parser and ``Dataset.ofRows``, looked up once per session: each lookup is a round trip to
    the JVM, so a step costs one call to parse it (when prepared) and one to run what was parsed."""

    def __init__(self, spark: Any) -> None:
        self.parse = spark._jsparkSession.sessionState().sqlParser().parsePlan
        self._session = spark._jsparkSession
        self._of_rows: Any = None
        self._jvm = spark._jvm

    def run(self, parsed: Any) -> None:
        """Run a parsed statement as ``spark.sql`` would (``Dataset.ofRows``: analysed, and a command executed,
        with the session active), without parsing it again."""
        if self._of_rows is None:
            self._of_rows = self._jvm.org.apache.spark.sql.Dataset.ofRows
        self._of_rows(self._session, parsed)


_ENGINES: WeakKeyDictionary[Any, _Engine] = WeakKeyDictionary()


def _engine(spark: Any) -> _Engine:
    engine = _ENGINES.get(spark)
    if engine is None:
        engine = _ENGINES[spark] = _Engine(spark)
    return engine


def _parse(spark: Any, sql: str) -> Any:
    """The statement parsed by the session's own parser (a malformed one raises); what _run_parsed runs."""
    return _engine(spark).parse(sql)


def _run_parsed(spark: Any, parsed: Any, sql: str, what: str) -> None:
    try:
        _engine(spark).run(parsed)
    except Exception as exc:
        raise ExecutionError(f"{what} failed: {_reason(exc)}\n  statement: {sql}") from None


def guard(what: str, sql: str, run: Callable[[], None]) -> None:
    try:
        run()
    except Exception as exc:
        raise ExecutionError(f"{what} failed: {_reason(exc)}\n  statement: {sql}") from None


# the sessions (by id) inside a case_sensitive block: a nested block changes nothing and costs no JVM call
_CASE_SENSITIVE_HELD: ContextVar[frozenset[int]] = ContextVar("case_sensitive_held", default=frozenset())


@contextmanager
def case_sensitive(spark: Any) -> Iterator[None]:
    """Resolve names case-sensitively for the statements inside; the session's setting is restored after.
    Inside an outer block on the same session (apply holds one around all its steps) nothing is set again."""
    held = _CASE_SENSITIVE_HELD.get()
    if id(spark) in held:
        yield
        return
    token = _CASE_SENSITIVE_HELD.set(held | {id(spark)})
    try:
        with _case_sensitive(spark):
            yield
    finally:
        _CASE_SENSITIVE_HELD.reset(token)


@contextmanager
def _case_sensitive(spark: Any) -> Iterator[None]:
    previous = spark.conf.get(CASE_SENSITIVE, None)
    spark.conf.set(CASE_SENSITIVE, "true")
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(CASE_SENSITIVE)
        else:
            spark.conf.set(CASE_SENSITIVE, previous)


def _create_table(spark: Any, catalog: str, change: changes.CreateTable, sql: str, what: str) -> Callable[[], None]:
    """Build the schema, spec 0, sort order and properties now (a malformed one is refused before any step
    runs); the returned call creates the table in one commit, as Spark's CREATE TABLE would, complete."""
    state = change.state
    iceberg = spark._jvm.org.apache.iceberg
    schema_json, spec_json, order_json = iceberg_json(state)
    schema = iceberg.SchemaParser.fromJson(schema_json)
    spec = iceberg.PartitionSpecParser.fromJson(schema, spec_json)
    order = iceberg.SortOrderParser.fromJson(schema, order_json)
    properties = spark._jvm.java.util.HashMap()
    extra = {"comment": state.comment} if state.comment is not None else {}
    for key, value in {"format-version": str(state.format_version), **state.properties, **extra}.items():
        properties.put(key, value)

    def create() -> None:
        builder = iceberg_catalog(spark, catalog).buildTable(table_identifier(spark, state.name), schema)
        builder = builder.withPartitionSpec(spec).withSortOrder(order).withProperties(properties)
        if state.location:
            builder = builder.withLocation(state.location)
        builder.create()

    return lambda: guard(what, sql, create)


def _term(spark: Any, field: PartitionFieldState) -> Any:
    expressions = spark._jvm.org.apache.iceberg.expressions.Expressions
    source, transform = ".".join(field.source), field.transform
    match transform.kind:
        case "identity":
            return expressions.ref(source)
        case "bucket":
            return expressions.bucket(source, transform.param)
        case "truncate":
            return expressions.truncate(source, transform.param)
        case "year" | "month" | "day" | "hour":
            return getattr(expressions, transform.kind)(source)
        case _:
            raise ExecutionError(f"partition transform {transform} cannot be added")


def _update_spec(spark: Any, catalog: str, change: changes.UpdatePartitionSpec) -> None:
    """Every removal, rename and addition of one table's partition spec in one commit."""
    table = iceberg_catalog(spark, catalog).loadTable(table_identifier(spark, change.table))
    table.refresh()
    update = table.updateSpec()
    for old in change.remove:
        update = update.removeField(old.name) if old.name else update.removeField(_term(spark, old))
    for rename in change.rename:
        update = update.renameField(rename.old_name, rename.field.name)
    for new in change.add:
        update = update.addField(new.name, _term(spark, new)) if new.name else update.addField(_term(spark, new))
    update.commit()


def _set_ref_retention(spark: Any, catalog: str, change: changes.SetRefRetention) -> None:
    """The ref's retention as declared, unset values included, in one commit on the table as it is now: the ref
    keeps pointing where it points (Spark's REPLACE BRANCH would move it to the snapshot it names, and cannot
    unset a value). A concurrent commit fails this one, which is retried on the table afresh."""
    iceberg = spark._jvm.org.apache.iceberg
    operations = iceberg_catalog(spark, catalog).loadTable(table_identifier(spark, change.table)).operations()
    base = operations.refresh()
    ref = base.ref(change.name)
    if ref is None or ref.isBranch() != (change.kind == "branch"):
        raise ExecutionError(f"the table has no {change.kind} {change.name} any more")

    def long(value: int | None) -> Any:
        return None if value is None else spark._jvm.java.lang.Long.valueOf(str(value))

    keep = change.new
    builder = iceberg.SnapshotRef.builderFrom(ref).maxRefAgeMs(long(keep.max_ref_age_ms))
    if change.kind == "branch":
        builder = builder.minSnapshotsToKeep(keep.min_snapshots_to_keep).maxSnapshotAgeMs(
            long(keep.max_snapshot_age_ms))
    operations.commit(base, iceberg.TableMetadata.buildFrom(base).setRef(change.name, builder.build()).build())


def run_sql(spark: Any, sql: str, what: str) -> None:
    try:
        spark.sql(sql)
    except Exception as exc:
        raise ExecutionError(f"{what} failed: {_reason(exc)}\n  statement: {sql}") from None


def create_tag(spark: Any, table: str, tag: str, snapshot: int, days: int, what: str) -> None:
    """Tag ``snapshot`` of ``table`` (as Spark names it, catalog first) for ``days``. A tag is a commit like any
    other, so it runs with commit retries on fresh connections: run bare, it failed on a SQLite catalog with
    SQLITE_BUSY_SNAPSHOT whenever another process had committed since Spark's catalog plugin initialised
    (tests/integration/test_sqlite_commits.py). The snapshot is named, so a retry after another writer's
    commit tags the same one, and IF NOT EXISTS makes a retry of a tag that landed a no-op."""
    sql = f"ALTER TABLE {table} CREATE TAG IF NOT EXISTS {ident(tag)} AS OF VERSION {snapshot} RETAIN {days} DAYS"
    with_commit_retries(spark, lambda: run_sql(spark, sql, what))


def query_sql(spark: Any, sql: str, what: str) -> list[dict[str, Any]]:
    """Run a statement that returns rows (a stored procedure's result) and return them as dicts."""
    try:
        return [row.asDict(recursive=True) for row in spark.sql(sql).collect()]
    except Exception as exc:
        raise ExecutionError(f"{what} failed: {_reason(exc)}\n  statement: {sql}") from None


def _reason(exc: Exception) -> str:
    """The JVM's own message (innermost cause) rather than py4j's 'An error occurred while calling'."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        cause, chain = java, [(java.getClass().getSimpleName(), str(java.getMessage()))]
        while cause.getCause() is not None and cause.getCause() != cause:
            cause = cause.getCause()
            chain.append((cause.getClass().getSimpleName(), str(cause.getMessage())))
        return f"{cause.getClass().getSimpleName()}: {cause.getMessage()}{unknown_outcome(chain)}"
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# Iceberg's REST client ends a request the server never answered with SocketTimeoutException inside a RESTException
# ("Error occurred while processing POST request"), and a commit answered 5xx with CommitStateUnknownException:
# neither is retried (a commit may have landed), so the step says so; a re-run plans from the table as it is.
UNANSWERED = "the catalog server did not answer within rest.client.socket-timeout-ms"
UNKNOWN = "the commit's outcome is unknown; run plan again once the server answers"


def unknown_outcome(chain: list[tuple[str, str]]) -> str:
    """What a REST failure means for the step, from its Java exception chain, outermost first, as (class name,
    message) pairs; '' when it is no REST failure of the kind."""
    names = [name for name, _ in chain]
    if "CommitStateUnknownException" in names:
        return f" (the catalog server answered the commit with an error: {UNKNOWN})"
    rest = next((message for name, message in chain if name == "RESTException"), None)
    if rest is None or "SocketTimeoutException" not in names:
        return ""  # a timeout of the store's (S3A), or none
    return f" ({UNANSWERED}: {UNKNOWN})" if "POST request" in rest else f" ({UNANSWERED})"


def with_commit_retries(
    spark: Any, run: Callable[[], Result], landed: Callable[[], bool] = lambda: False, *, renewed: bool = False
) -> Result | None:
    """Run one statement; a commit that lost a race with another writer changed nothing and is tried again.

    ``landed`` says whether the statement took effect although an error was reported (then None is
    returned). Before a retry Spark's catalog plugins are dropped, with the tables they cache: a statement
    such as a partition change commits on the table as it was loaded, without refreshing it. Every attempt
    starts on fresh connections to a SQLite catalog: the one Iceberg's JDBC catalog initialised itself with
    keeps an old read snapshot and fails every write once another process committed (sqlite_pool).
    ``renewed``: the caller knows the pools were renewed since the catalog plugins were last loaded (an earlier
    call of this run returned, and nothing dropped the plugins since), so the first attempt skips the JVM
    calls that would find that out; a retry renews as always.
    """
    for attempt in range(1, COMMIT_ATTEMPTS + 1):
        try:
            if attempt > 1 or not renewed:
                renew_connections(spark, again=attempt > 1)
            return run()
        except ExecutionError as exc:
            if attempt == COMMIT_ATTEMPTS or not TRANSIENT.search(str(exc)):
                raise
            time.sleep(min(0.1 * 2**attempt, 2.0))
            drop_catalog_plugins(spark)
            if landed():
                return None
    raise AssertionError("unreachable: the last attempt returns or raises")


def with_conflict_retries(
    spark: Any, run: Callable[[], Result], landed: Callable[[], bool] = lambda: False
) -> Result | None:
    """``with_commit_retries``, and a step whose commit failed validation because a concurrent commit touched
    the same files (``CONFLICT``) run again on the table as it is then. Only for idempotent steps that plan
    from the table afresh: erasure's, and maintenance procedures."""
    for attempt in range(1, CONFLICT_ATTEMPTS + 1):
        try:
            return with_commit_retries(spark, run, landed)
        except ExecutionError as exc:
            if not CONFLICT.search(str(exc)) or attempt == CONFLICT_ATTEMPTS:
                raise
            time.sleep(min(0.2 * attempt, 2.0))
            drop_catalog_plugins(spark)  # the next attempt reads the table as it is now
    raise AssertionError("unreachable: the last attempt returns or raises")


def drop_catalog_plugins(spark: Any) -> None:
    """Spark loads every catalog plugin afresh on next use: no table it cached is read again."""
    spark._jsparkSession.sessionState().catalogManager().reset()
