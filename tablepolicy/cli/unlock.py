"""``tablepolicy unlock TABLE``: show who holds a table's lock and take over a dead run's lock.

Exit codes follow Terraform's ``force-unlock``: 0 only when a lock was removed; 1 when there was no lock
to remove (nothing changed: a wrong catalog or table name must not pass for success in a script), when the
holder is alive and ``--force`` was not given, or when the table is unknown.
"""

from __future__ import annotations

import difflib
import time
from pathlib import Path

from tablepolicy.compiler.iceberg.names import format_name, parse_name
from tablepolicy.runtime.caches.folder import cache_dir
from tablepolicy.runtime.catalog.config import resolve_catalog
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.lock import Found, LockStore, UnlockError, ago, lock_store, utc

from ..api import open_reader
from .exits import Exit
from .output import catalog_header, error, info, paint

DANGER = ("Taking over a live run's lock lets another apply, maintain or erase change the table while that run "
          "still works on it: two runs rewriting the same files, snapshots expired under a reader, a plan applied "
          "twice. Stop that run first (or wait for it); with --force it is cut off")


def unlock(table: str, catalog: str | None, policies: Path, *, force: bool) -> int:
    config = resolve_catalog(catalog, policies)
    catalog_header(config)
    try:
        name = parse_name(table)
    except ValueError as exc:
        error(f"TABLE {table!r}: {exc}")
        return Exit.ERROR
    with open_reader(config) as reader:
        store = lock_store(reader, cache_dir(policies))
        try:
            # apply names a lock by its parts joined with dots, maintain and erase by the quoted name
            spellings = dict.fromkeys([format_name(name), ".".join(name)])
            found = next((f for f in map(store.find, spellings) if f is not None), None)
            if found is None:
                return _no_lock(reader, store, name)
            _show(found, store)
            if found.verdict.alive and not force:
                error(f"the holder of {found.name} is alive: {found.verdict.reason}. {DANGER}. To take it "
                      f"anyway: tablepolicy unlock {found.name} --force")
                return Exit.ERROR
            if not store.remove(found, force=force):
                raise UnlockError(f"the lock on {found.name} changed while it was being taken over (its holder "
                                  "beat, or a new run took it); run unlock again to see the new holder")
        finally:
            store.close()
    if found.verdict.alive:
        info(paint(f"Removed the lock of a LIVE run on {found.name} (--force).", "red", bold=True)
             + " Its holder learns it at its next heartbeat and fails; check the table before the next run.")
    else:
        info(f"Took over the dead run's lock on {found.name}: the next apply, maintain or erase of it can proceed.")
    return Exit.OK


def _show(found: Found, store: LockStore) -> None:
    now = time.time()
    state = (paint("alive", "yellow", bold=True) if found.verdict.alive else paint("dead", "green", bold=True))
    lines = [f"Lock on {found.name} ({store.where}):"]
    holder = found.holder
    if holder is not None:
        lines += [f"  holder:         pid {holder.pid} on {holder.host}",
                  f"  command:        {holder.command or '(not recorded)'}",
                  f"  since:          {_when(holder.since, now)}",
                  f"  last heartbeat: {_when(holder.heartbeat, now) if holder.interval is not None else '(none)'}"]
    lines.append(f"  state:          {state}: {found.verdict.reason}")
    info("\n".join(lines))


def _when(seconds: float, now: float) -> str:
    return f"{utc(seconds)} ({ago(now - seconds)})"


def _no_lock(reader: CatalogReader, store: LockStore, name: tuple[str, ...]) -> int:
    wanted = format_name(name)
    if reader.table(name) is not None:
        error(f"no lock on table {wanted} in {store.where}: nothing to unlock")
        return Exit.ERROR
    known = sorted({format_name(t) for t in _catalog_tables(reader)} | set(store.names()))
    close = difflib.get_close_matches(wanted, known, n=5, cutoff=0.6)
    more = " ..." if len(known) > 20 else ""
    listed = f"its tables: {', '.join(known[:20])}{more}" if known else "the catalog holds no tables"
    hint = f"close names: {', '.join(close)}" if close else listed
    error(f"table {wanted} is not in {reader.config.describe()} and holds no lock; {hint}")
    return Exit.ERROR


def _catalog_tables(reader: CatalogReader) -> list[tuple[str, ...]]:
    listed = reader.metadata_locations()
    if listed is not None:
        return list(listed)
    tables: list[tuple[str, ...]] = []
    pending = [tuple(n) for n in reader.catalog.list_namespaces()]
    while pending:
        namespace = pending.pop()
        tables += reader.tables_in(namespace)
        pending += [tuple(n) for n in reader.catalog.list_namespaces(namespace) if tuple(n) != namespace]
    return tables
