"""The tables a view's SQL reads, found by parsing it with sqlglot (Spark dialect), and checked at plan against
git and the catalog: a view reading a table neither git declares nor the catalog holds is an error (TP463),
since Spark refuses to create it at apply. SQL sqlglot cannot parse is a warning (TP464): Spark's parser at
apply is the authority (apply parses every statement before it runs any), and sqlglot's Spark dialect does
not cover all of Spark's grammar, so the tables of that view are not checked.

Names are resolved as Spark resolves them when apply creates the view: apply makes the plan's catalog
current, whose default namespace is empty (Iceberg's SparkCatalog without a ``default-namespace`` option),
so the view records no default namespace. ``ns.t`` is table ``t`` of namespace ``ns``; ``catalog.ns.t``
with the plan's catalog is the same table; a name in ``spark_catalog`` (the session's catalog) is not
looked up; a name without a namespace is looked for in the catalog's root, where git declares no table
(every table has a namespace, TP109) and pyiceberg cannot look. ``ns.t.snapshots`` (a metadata table) and
``ns.t.branch_x`` / ``ns.t.tag_x`` (Iceberg's ref suffixes) read table ``ns.t``. CTE names are no tables.

Pure: the catalog is asked through ``CatalogNames``, which the planner's state source answers.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from .. import codes
from ..diagnostics import Diagnostic, Severity
from ..iceberg.names import format_name
from ..loader import LoadedView
from ..policy.view import query_text

SESSION_CATALOG = "spark_catalog"
# Iceberg's metadata tables (MetadataTableType), read as ns.table.<type>
METADATA_TABLES = frozenset({
    "entries", "files", "data_files", "delete_files", "history", "metadata_log_entries", "snapshots", "refs",
    "manifests", "partitions", "all_data_files", "all_delete_files", "all_files", "all_manifests", "all_entries",
    "position_deletes",
})
REF_PREFIXES = ("branch_", "tag_", "snapshot_id_", "at_timestamp_")
FILE_FORMATS = frozenset({"parquet", "orc", "json", "csv", "text", "avro", "binaryfile"})  # format.`path`
NEARBY = 8  # names a hint lists at most


class ViewSqlError(ValueError):
    """SQL sqlglot cannot read as one query."""


@functools.lru_cache(maxsize=1024)  # validate, the check at plan and the creation order read each view's SQL
def tables_read(sql: str) -> tuple[tuple[str, ...], ...]:
    """The names of the tables (and views) ``sql`` reads, as written, in order of first appearance: every
    table of every scope (subqueries, CTE bodies, set operations), CTE names left out."""
    import sqlglot  # a tenth of a second to import: only when a project has views
    from sqlglot import exp
    from sqlglot.errors import ParseError, SqlglotError
    from sqlglot.optimizer.scope import traverse_scope

    try:
        statements = [s for s in sqlglot.parse(sql, read="spark") if s is not None]
        if len(statements) != 1:
            raise ViewSqlError(f"it holds {len(statements)} statements, a view one query")
        [statement] = statements
        if not isinstance(statement, exp.Query):
            raise ViewSqlError(f"it is no query (SELECT, WITH, VALUES, ...) but {statement.key.upper()}")
        tables = [source for scope in traverse_scope(statement) for source in scope.sources.values()
                  if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier | exp.Dot)]
        tables.sort(key=lambda t: t.parts[0].meta.get("start", 0))  # in the order the SQL names them
        found: list[tuple[str, ...]] = []
        for table in tables:
            name = tuple(part.name for part in table.parts)
            if name not in found:
                found.append(name)
        return tuple(found)
    except ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        where = f"line {first['line']}, col {first['col']}: " if first.get("line") else ""
        raise ViewSqlError(where + _TOKEN.sub(r"'\1'", str(first.get("description") or exc).splitlines()[0])) \
            from None
    except SqlglotError as exc:
        raise ViewSqlError(_TOKEN.sub(r"'\1'", (str(exc) or type(exc).__name__).splitlines()[0])) from None


_TOKEN = re.compile(r"<Token token_type: [^,]*, text: (.*?), line: .*?>")


def check_view_sql(view: LoadedView) -> Iterator[Diagnostic]:
    """A warning (TP464) when sqlglot cannot read the view's SQL as one query (validate, no catalog)."""
    if view.state != "present":
        return
    try:
        tables_read(query_text(view.policy.sql))
    except ViewSqlError as exc:
        yield Diagnostic(codes.TP464, Severity.WARNING, view.source.value(("sql",)),
                         f"the SQL of view {format_name(view.name)} does not parse with sqlglot's Spark dialect "
                         f"({exc}): plan cannot check the tables it reads",
                         "check the SQL; apply parses it with Spark before it runs any change, and this warning "
                         "stays if Spark accepts what sqlglot does not")


class CatalogNames(Protocol):
    """What the check asks the catalog (the planner's state source answers it)."""

    def tables_in(self, namespace: tuple[str, ...]) -> list[tuple[str, ...]]: ...

    def view(self, name: tuple[str, ...]) -> object | None: ...


@dataclass
class Known:
    """The names a view may read: declared in git (tables and views, present) or held by the catalog, which is
    asked once per namespace (tables) and once per name (views)."""

    catalog: CatalogNames
    declared: frozenset[tuple[str, ...]]
    _listed: dict[tuple[str, ...], frozenset[tuple[str, ...]]] = field(default_factory=dict)
    _views: dict[tuple[str, ...], bool] = field(default_factory=dict)

    def in_catalog(self, namespace: tuple[str, ...]) -> frozenset[tuple[str, ...]]:
        if namespace not in self._listed:
            self._listed[namespace] = frozenset(self.catalog.tables_in(namespace))
        return self._listed[namespace]

    def has(self, name: tuple[str, ...]) -> bool:
        if name in self.declared or name in self.in_catalog(name[:-1]):
            return True
        if name not in self._views:
            self._views[name] = self.catalog.view(name) is not None
        return self._views[name]

    def nearby(self, namespace: tuple[str, ...]) -> list[tuple[str, ...]]:
        return sorted({n for n in self.declared if n[:-1] == namespace} | self.in_catalog(namespace))


def resolve(written: tuple[str, ...], catalog: str) -> tuple[str, ...] | None:
    """The name Spark reads in the plan's catalog (None: a name in another catalog, or a file)."""
    if len(written) >= 2 and written[0] == SESSION_CATALOG:
        return None
    if len(written) == 2 and written[0].lower() in FILE_FORMATS and "/" in written[1]:
        return None  # Spark's SQL on files: parquet.`/path`
    if len(written) >= 2 and written[0] == catalog:
        return written[1:]
    return written


def _target(name: tuple[str, ...], known: Known) -> tuple[str, ...]:
    """The table a metadata-table or ref suffix reads (``ns.t.snapshots`` reads ``ns.t``), else ``name``."""
    last = name[-1].lower()
    if len(name) >= 3 and not known.has(name) and (last in METADATA_TABLES or last.startswith(REF_PREFIXES)):
        return name[:-1]
    return name


def unknown_reads(views: Iterable[LoadedView], known: Known, catalog: str) -> list[Diagnostic]:
    """An error (TP463) at each view's ``sql:`` for each table it reads that neither git declares nor the
    catalog holds. Views whose SQL sqlglot cannot parse are left out (validate warned, TP464)."""
    found = []
    for view in views:
        try:
            written = tables_read(query_text(view.policy.sql))
        except ViewSqlError:
            continue
        for name in written:
            resolved = resolve(name, catalog)
            if resolved is None:
                continue
            target = _target(resolved, known)
            if len(target) >= 2 and known.has(target):
                continue
            found.append(_finding(view, name, target, known, catalog))
    return found


def _finding(view: LoadedView, written: tuple[str, ...], target: tuple[str, ...], known: Known,
             catalog: str) -> Diagnostic:
    where = view.source.value(("sql",))
    if len(target) == 1:
        same = [n for n in known.declared if n[-1].lower() == target[0].lower()]
        suggestion = same or [(*view.name[:-1], target[0])]
        message = (f"view {format_name(view.name)} reads table {format_name(written)} without a namespace: Spark "
                   f"looks for it in the root of catalog '{catalog}' (the view's default namespace is empty), "
                   "where git declares no table")
        return Diagnostic(codes.TP463, Severity.ERROR, where, message,
                          f"write the table with its namespace, e.g. {_names(sorted(suggestion))}")
    message = (f"view {format_name(view.name)} reads table {format_name(target)}, which git does not declare and "
               f"catalog '{catalog}' does not hold")
    return Diagnostic(codes.TP463, Severity.ERROR, where, message, _hint(view, target, known, catalog))


def _hint(view: LoadedView, target: tuple[str, ...], known: Known, catalog: str) -> str:
    namespace = target[:-1]
    nearby = [n for n in known.nearby(namespace) if n != view.name]
    if not nearby:
        spaces = sorted({n[:-1] for n in known.declared})
        where = f"; git declares tables in {_names(spaces)}" if spaces else ""
        return (f"name a table that exists or declare {format_name(target)} in git: namespace "
                f"{format_name(namespace)} holds none in git or catalog '{catalog}'{where}")
    close = [n for n in nearby if n[-1].lower() == target[-1].lower()]
    similar = difflib.get_close_matches(target[-1], [n[-1] for n in nearby], n=3)
    close += [n for n in nearby if n[-1] in similar and n not in close]
    did = f" (did you mean {_names(close)}?)" if close else ""
    return (f"name a table that exists{did} or declare {format_name(target)} in git; namespace "
            f"{format_name(namespace)} holds {_names(nearby)}")


def _names(names: list[tuple[str, ...]], at_most: int = NEARBY) -> str:
    shown = ", ".join(format_name(n) for n in names[:at_most])
    return shown + (f" and {len(names) - at_most} more" if len(names) > at_most else "")




def creation_order(views: list[LoadedView], catalog: str) -> list[LoadedView]:
    """``views`` (in their given order) with each after the views of the list it reads, as Spark needs them at
    CREATE VIEW: a view reading another view git declares is created after it. A view whose SQL sqlglot cannot
    parse keeps its place among the others; views reading each other in a cycle keep the given order (Spark
    refuses such a view at apply)."""
    names = {v.name for v in views}
    reads: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for view in views:
        try:
            written = tables_read(query_text(view.policy.sql))
        except ViewSqlError:
            written = ()
        resolved = (resolve(name, catalog) for name in written)
        reads[view.name] = {n for n in resolved if n in names and n != view.name}
    placed: list[LoadedView] = []
    done: set[tuple[str, ...]] = set()
    waiting = list(views)
    while waiting:
        ready = next((v for v in waiting if reads[v.name] <= done), waiting[0])  # a cycle: the first waiting
        placed.append(ready)
        done.add(ready.name)
        waiting.remove(ready)
    return placed
