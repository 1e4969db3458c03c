"""Current state of tables, read with pyiceberg's catalogs and FileIO (no JVM), as the TableState policies give."""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import re
import shutil
import tempfile
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
from pyiceberg.io import FileIO, load_file_io
from pyiceberg.serializers import Compressor
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadataUtil
from sqlalchemy import event

from tablepolicy.compiler.catalog.config import CatalogConfig, embedded_root
from tablepolicy.compiler.catalog.current import CurrentTable, current_table
from tablepolicy.compiler.diff.changes import RetentionEstimate
from tablepolicy.compiler.errors import CatalogError
from tablepolicy.compiler.model.table import ColumnPath
from tablepolicy.compiler.model.view import CurrentView, ViewFormatError, current_view

from .estimate import estimate_retention

if TYPE_CHECKING:
    from tablepolicy.compiler.importer import Inventory

PYARROW_IO = "pyiceberg.io.pyarrow.PyArrowFileIO"


def open_catalog(config: CatalogConfig, *, create: bool = True) -> Catalog:
    """``create``: an embedded catalog's ``.lake/`` is made on first use; without it, an embedded catalog not
    made yet is opened empty in memory, so a read-only command leaves no file behind."""
    from ..locations import PYICEBERG_IO

    root = embedded_root(config)
    properties = dict(config.properties)
    if properties.get("py-io-impl", PYARROW_IO) == PYARROW_IO:  # Iceberg's paths read as text, not URIs
        properties["py-io-impl"] = PYICEBERG_IO
    if config.kind == "rest":  # as Spark's side (runtime/spark/catalog_conf.py): the server answers for its views
        properties.setdefault("view-endpoints-supported", "true")

    if root is not None and create:
        (root / "warehouse").mkdir(parents=True, exist_ok=True)
    elif root is not None and not (root / "catalog.db").exists():
        properties["uri"] = f"sqlite:///{_empty_catalog_file()}"  # the empty catalog the first write would make
    if root is None and (problem := sqlite_problem(config)) is not None:
        raise CatalogError(f"cannot open {config.describe()}: {problem}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            catalog = _load(config, properties)
        _concurrent_sqlite(catalog)
        if config.kind == "rest":  # one listing: a refused credential or an unknown warehouse is said here, once
            catalog.list_namespaces()
        return catalog
    except Exception as exc:  # pyiceberg raises many kinds; the user needs one clear line
        raise CatalogError(f"cannot open {config.describe()}: {explain_catalog_error(exc, config)}") from None


def _load(config: CatalogConfig, properties: dict[str, str]) -> Catalog:
    """pyiceberg's catalog for the definition (resolved already: runtime/catalog/config.py); a REST one with every
    request bounded in time (rest.py), unless the definition names its own ``py-catalog-impl``."""
    if config.kind == "rest" and "py-catalog-impl" not in properties:
        from .rest import BoundedRestCatalog

        return BoundedRestCatalog(config.name, **properties)
    return load_catalog(config.name, **properties)


@functools.cache
def _empty_catalog_file() -> Path:
    """A SQLite file outside the project standing in for an embedded catalog not made yet (a file, not
    ``:memory:``: pooled and forked connections must all see the catalog's tables); removed at exit."""
    folder = Path(tempfile.mkdtemp(prefix="tablepolicy-empty-catalog-"))
    creator = os.getpid()

    def remove() -> None:
        if os.getpid() == creator:  # a forked worker exiting leaves it to the process that made it
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)
    return folder / "catalog.db"


def setting(config: CatalogConfig, key: str) -> str:
    """Where a catalog setting is written: its key in .pyiceberg.yaml and its environment variable (none for a key
    with a dot, such as rest.client.*: pyiceberg reads no dot from an environment variable's name)."""
    if "." in key:
        return f"'{key}' of catalog '{config.name}' (.pyiceberg.yaml)"
    return f"'{key}' of catalog '{config.name}' (.pyiceberg.yaml, or PYICEBERG_CATALOG__{config.name.upper()}__" \
           f"{key.upper().replace('-', '_')})"


def sqlite_problem(config: CatalogConfig) -> str | None:
    """Why a SQLite catalog's uri cannot serve as a catalog, before SQLite says it in its own words: in memory (every
    connection, and Spark's, would see another empty database), or a folder."""
    uri = config.properties.get("uri", "")
    if config.kind != "sql" or not uri.startswith("sqlite:"):
        return None
    database = uri.partition(":///")[2].split("?", 1)[0]
    if database in ("", ":memory:") or "mode=memory" in uri:
        return (f"an in-memory SQLite catalog ({uri}) is empty for every connection that opens it, and apply's "
                f"Spark would see another: set {setting(config, 'uri')} to a file, e.g. sqlite:///catalog.db")
    if Path(database).is_dir():
        return (f"{database} is a folder, not a SQLite database file; set {setting(config, 'uri')} to a file in "
                f"it, e.g. sqlite:///{Path(database) / 'catalog.db'}")
    return None


def rest_failure(exc: BaseException, config: CatalogConfig, said: str) -> str | None:
    """A REST server that did not answer in time, or answered 5xx after the retries (runtime/catalog/rest.py), in
    the user's terms with the setting that bounds it; None for any other failure."""
    kind = type(exc).__name__
    if config.kind != "rest":
        return None
    if kind in ("ReadTimeout", "ConnectTimeout"):
        waited = "rest.client.connection-timeout-ms" if kind == "ConnectTimeout" else "rest.client.socket-timeout-ms"
        return (f"the REST server did not answer within {waited} ({said}); check that it runs and answers at "
                f"{setting(config, 'uri')}, or raise {setting(config, waited)} for a slow server")
    if kind in ("ServiceUnavailableError", "ServerError", "TooManyRequestsError"):
        return (f"the REST server answered with an error ({said}), still after the retries of "
                f"{setting(config, 'rest.client.max-retries')}; try again once it recovers")
    return None


def explain_catalog_error(exc: BaseException, config: CatalogConfig) -> str:
    """What went wrong opening a catalog, in the user's terms, and which setting to change: never an exception
    class or a driver's internals beyond its first line (secrets masked)."""
    text = _clean(exc, config) if isinstance(exc, Exception) else ""
    if "file is not a database" in text:
        database = config.properties.get("uri", "").partition(":///")[2].split("?", 1)[0]
        return (f"{database or 'the file'} is not a SQLite database (SQLite: file is not a database); set "
                f"{setting(config, 'uri')} to the catalog's database file, or move this file away so a new catalog "
                "is made there")
    if "URI missing" in text:
        return (f"it has no uri; set {setting(config, 'uri')}: sqlite:///PATH or postgresql+psycopg2://HOST/DB "
                "(SQL), http(s)://HOST (REST) or thrift://HOST:PORT (Hive)")
    first = re.sub(r"^\((?:[\w.]+)\) ", "", text)  # SQLAlchemy's "(sqlite3.OperationalError) " prefix
    kind = type(exc).__name__
    errno = re.search(r"\[Errno -?\d+\] [^\"')]+", first)
    first = errno.group(0).strip() if errno and kind.endswith(("ConnectionError", "Timeout")) else first
    if "is not a valid CatalogType" in text:
        return (f"its type '{config.properties.get('type')}' is not a catalog type; set {setting(config, 'type')} "
                "to one of sql, rest, hive, glue, dynamodb, bigquery, or remove it to infer the type from the uri")
    if kind == "NoSuchModuleError":  # SQLAlchemy has no dialect or driver of the uri's scheme
        first = f"no installed SQL driver serves '{config.properties.get('uri', '').partition(':')[0]}'"
    if "Could not infer the catalog type" in text or kind in ("ArgumentError", "NoSuchModuleError", "InvalidURL",
                                                              "MissingSchema", "InvalidSchema"):
        return (f"its uri is not a catalog address this tool can open ({first or kind}); set "
                f"{setting(config, 'uri')} to sqlite:///PATH, postgresql+psycopg2://HOST/DB, "
                "http(s)://HOST (REST) or thrift://HOST:PORT (Hive), or set its 'type'")
    if (unanswered := rest_failure(exc, config, first or kind)) is not None:
        return unanswered
    if kind in ("OperationalError", "InterfaceError", "ConnectionError", "ConnectTimeout", "Timeout",
                "ReadTimeout", "TimeoutError", "ConnectionRefusedError", "OSError", "ProgrammingError"):
        return (f"the catalog cannot be reached or opened ({first or kind}); check that it runs and that "
                f"{setting(config, 'uri')} names the right host, port, database and credentials")
    if config.kind == "rest" and (kind in ("OAuthError", "NotAuthorizedError", "ForbiddenError", "UnauthorizedError")
                                  or re.search(r"invalid_client|invalid_scope|unauthorized_client|NotAuthorized|"
                                               r"Forbidden|\b40[13]\b", text)):
        return (f"the REST server refused the catalog's credentials ({first or kind}); check "
                f"{setting(config, 'credential')} (CLIENT_ID:SECRET, or 'token'), with its 'oauth2-server-uri' and "
                "'scope'")
    if config.kind == "rest" and "warehouse" in text.lower():
        return f"{first}; set {setting(config, 'warehouse')} to a warehouse the REST server serves"
    if "warehouse" in text.lower():
        return (f"{first}; set {setting(config, 'warehouse')} to the location of its tables "
                "(a file:// path or s3:// URI)")
    return (f"{first or 'it failed without a message'}; check the settings of catalog '{config.name}' in "
            f".pyiceberg.yaml or its PYICEBERG_CATALOG__{config.name.upper()}__* variables")


SQLITE_BUSY_TIMEOUT_MS = 30_000


def _concurrent_sqlite(catalog: Catalog) -> None:
    """A file-backed SQLite catalog shared with Spark and other writers: WAL, so readers never block a
    commit, and a busy timeout, so a commit waits for another instead of failing."""
    engine = getattr(catalog, "engine", None)
    if engine is None or engine.url.get_backend_name() != "sqlite":
        return

    def pragmas(connection: Any, _record: Any) -> None:
        cursor = connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.close()

    event.listen(engine, "connect", pragmas)
    engine.dispose()  # connections opened before the listener existed go away


def _clean(exc: Exception, config: CatalogConfig) -> str:
    """First line of the error with every configured secret masked."""
    return config.redact(str(exc).splitlines()[0] if str(exc) else "")


def read_metadata(catalog: Catalog, location: str, io: FileIO | None = None) -> dict[str, Any]:
    """A table's metadata document, read from its file as a catalog's load_table does after the lookup (with
    ``io`` when given, else the catalog's FileIO)."""
    io = io or load_file_io(properties=catalog.properties, location=location)
    with io.new_input(location).open() as stream, Compressor.get_compressor(location).stream_decompressor(
            stream) as decompressed:
        document: dict[str, Any] = json.load(decompressed)
    return document


@contextlib.contextmanager
def _catalog_errors(what: str, config: CatalogConfig) -> Iterator[None]:
    """Any failure reading the catalog or a metadata file as one CatalogError line: ``what``, then the cause."""
    try:
        yield
    except CatalogError:
        raise
    except Exception as exc:
        said = _clean(exc, config)
        raise CatalogError(f"{what}: {rest_failure(exc, config, said) or said}") from None


def load(catalog: Catalog, name: tuple[str, ...]) -> Table | None:
    try:
        return catalog.load_table(name)
    except (NoSuchTableError, NoSuchNamespaceError):
        return None


RECENT_TABLES = 64  # states kept after reading: a plan reads each table once; apply and import read a few again


class CatalogReader:
    """Current state of the catalog, read once per table per run.

    What a run read is remembered as each table's metadata file (a metadata file is never rewritten, so reading
    it again gives the same state); the parsed states of the last few tables are kept, never every table's: at
    10,000 tables they were most of a plan's memory.
    """

    def __init__(self, config: CatalogConfig, *, create: bool = True) -> None:
        self.config = config
        self.create = create
        self.catalog = open_catalog(config, create=create)
        self._locations: dict[tuple[str, ...], str | None] = {}  # None: the table did not exist
        self._recent: OrderedDict[tuple[str, ...], CurrentTable] = OrderedDict()
        self._listing: dict[tuple[str, ...], str] | bool | None = False  # False: not listed yet
        self._namespaces: set[tuple[str, ...]] | None = None  # every namespace holding a listed table

    def reopen_after_fork(self) -> None:
        """In a forked worker: leave the parent's connections alone and open new ones.

        A SQL catalog's pool is dropped without closing the parent's sockets; any other catalog (an
        HTTP session for REST, say) is opened afresh, since two processes must not share a socket.
        """
        engine = getattr(self.catalog, "engine", None)
        if engine is not None:
            engine.dispose(close=False)
        else:
            self.catalog = open_catalog(self.config, create=self.create)

    def close(self) -> None:
        """Release pooled catalog connections (a SQL catalog keeps them open otherwise)."""
        engine = getattr(self.catalog, "engine", None)
        if engine is not None:
            engine.dispose()
        self._locations.clear()
        self._recent.clear()

    def __enter__(self) -> CatalogReader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def _listed(self) -> dict[tuple[str, ...], str] | None:
        """The one-query listing of a SQL catalog, taken once per reader (None for other catalogs)."""
        if self._listing is False:
            self._listing = self.metadata_locations()
        return self._listing if isinstance(self._listing, dict) else None

    def _listed_namespaces(self) -> set[tuple[str, ...]]:
        if self._namespaces is None:
            listing = self._listed() or {}
            self._namespaces = {name[:k] for name in listing for k in range(1, len(name))}
        return self._namespaces

    def _listing_for(self, name: tuple[str, ...]) -> dict[tuple[str, ...], str] | None:
        return None if any("." in part for part in name[:-1]) else self._listed()

    def _forget(self, name: tuple[str, ...]) -> None:
        self._locations.pop(name, None)
        self._recent.pop(name, None)

    def _reading(self, name: tuple[str, ...]) -> contextlib.AbstractContextManager[None]:
        return _catalog_errors(f"cannot read table {'.'.join(name)} from {self.config.describe()}", self.config)

    def _document(self, name: tuple[str, ...], location: str) -> tuple[dict[str, Any], FileIO]:
        """The metadata document at ``location`` and the FileIO to read the table's files with: a catalog without
        a listing loads the table (its FileIO may carry credentials the catalog vends)."""
        if self._listing_for(name) is None:
            table = load(self.catalog, name)
            if table is not None and table.metadata_location == location:
                return json.loads(table.metadata.model_dump_json()), table.io
            if table is not None:
                return read_metadata(self.catalog, location, table.io), table.io
        io = load_file_io(properties=self.catalog.properties, location=location)
        return read_metadata(self.catalog, location, io), io

    def _remember(self, name: tuple[str, ...], current: CurrentTable) -> CurrentTable:
        self._recent[name] = current
        self._recent.move_to_end(name)
        while len(self._recent) > RECENT_TABLES:
            self._recent.popitem(last=False)
        return current

    def table(self, name: tuple[str, ...], *, fresh: bool = False) -> CurrentTable | None:
        """The table as read in this run (the same metadata file on every call); ``fresh`` reads the catalog
        again."""
        if fresh:
            self._forget(name)
        if name in self._recent:
            self._recent.move_to_end(name)
            return self._recent[name]
        with self._reading(name):
            if name in self._locations:
                location = self._locations[name]
                if location is None:
                    return None
                return self._remember(name, current_table(name, location, self._document(name, location)[0]))
            listing = None if fresh else self._listing_for(name)
            if listing is not None:  # from the listing: read the metadata file straight away, no query per table
                location = self._locations[name] = listing.get(name)
                if location is None:
                    return None
                return self._remember(name, current_table(name, location, read_metadata(self.catalog, location)))
            table = load(self.catalog, name)
            if table is None:
                self._locations[name] = None
                return None
            location = self._locations[name] = table.metadata_location
            metadata = json.loads(table.metadata.model_dump_json())
            return self._remember(name, current_table(name, location, metadata))

    def pyiceberg_table(self, name: tuple[str, ...], *, fresh: bool = False) -> Table | None:
        """pyiceberg's Table for the metadata this run read (manifests are read through it), built anew on each
        call; ``fresh`` reads the catalog again."""
        if fresh:
            self._forget(name)
            with self._reading(name):
                table = load(self.catalog, name)
            self._locations[name] = table.metadata_location if table is not None else None
            return table
        if name not in self._locations:
            self.table(name)
        location = self._locations[name]
        if location is None:
            return None
        with self._reading(name):
            document, io = self._document(name, location)
            return Table(identifier=name, metadata=TableMetadataUtil.parse_raw(json.dumps(document)),
                         metadata_location=location, catalog=self.catalog, io=io)

    def estimate_retention(
        self, name: tuple[str, ...], column: ColumnPath, cutoff: datetime
    ) -> RetentionEstimate | None:
        """Read from the manifests of the metadata this run planned against."""
        table = self.pyiceberg_table(name)
        return estimate_retention(table, column, cutoff) if table is not None else None

    def metadata_locations(self) -> dict[tuple[str, ...], str] | None:
        """Every table's current metadata file in one query (SQL catalogs); None where there is no such query."""
        engine = getattr(self.catalog, "engine", None)
        if engine is None:
            return None
        from sqlalchemy import text

        # views are rows too where the catalog's schema has iceberg_type (Iceberg's JDBC schema V1); one without
        # that column holds no views
        base = "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables WHERE catalog_name = :name"
        rows = None
        for query in (f"{base} AND (iceberg_type IS NULL OR iceberg_type = 'TABLE')", base):
            try:
                with engine.connect() as connection:
                    rows = connection.execute(text(query), {"name": self.catalog.name}).all()
                break
            except Exception:
                continue
        if rows is None:
            return None
        return {(*str(ns).split("."), str(name)): str(location) for ns, name, location in rows if location}

    def view(self, name: tuple[str, ...]) -> CurrentView | None:
        """The view as the catalog holds it now (None: no view of that name), read without a JVM: a SQL
        catalog's row with iceberg_type VIEW (Iceberg's JDBC catalog, schema V1) and its metadata file."""
        engine = getattr(self.catalog, "engine", None)
        if engine is None and self.config.kind == "rest":
            return self._rest_view(name)
        if engine is None:
            raise CatalogError(f"cannot read view {'.'.join(name)}: tablepolicy reads views from SQL catalogs "
                               f"(Iceberg's JDBC catalog) and REST catalogs only, and {self.config.describe()} is "
                               "neither")
        from sqlalchemy import text

        query = text("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = :catalog AND "
                     "table_namespace = :namespace AND table_name = :name AND iceberg_type = 'VIEW'")
        try:
            with engine.connect() as connection:
                location = connection.execute(query, {"catalog": self.catalog.name, "namespace": ".".join(name[:-1]),
                                                      "name": name[-1]}).scalar()
        except Exception as exc:
            if "iceberg_type" in str(exc):  # a catalog schema without the column (V0) holds no views
                return None
            raise CatalogError(f"cannot read view {'.'.join(name)} from {self.config.describe()}: "
                               f"{_clean(exc, self.config)}") from None
        if location is None:
            return None
        try:
            return current_view(name, str(location), read_metadata(self.catalog, str(location)))
        except (ViewFormatError, ValueError, OSError) as exc:
            raise CatalogError(f"cannot read view {'.'.join(name)} from {self.config.describe()}: "
                               f"{_clean(exc, self.config)}") from None

    def namespace_exists(self, namespace: tuple[str, ...]) -> bool:
        """A namespace holding a listed table exists (a SQL catalog's own rule); others are asked for."""
        if not any("." in part for part in namespace) and namespace in self._listed_namespaces():
            return True
        try:
            return bool(self.catalog.namespace_exists(namespace))
        except Exception as exc:
            message = f"cannot list namespaces of {self.config.describe()}: {_clean(exc, self.config)}"
            raise CatalogError(message) from None

    def tables_in(self, namespace: tuple[str, ...]) -> list[tuple[str, ...]]:
        listing = self._listed() if not any("." in part for part in namespace) else None
        if listing is not None:
            return sorted(name for name in listing if name[:-1] == namespace)
        try:
            return [tuple(t) for t in self.catalog.list_tables(namespace)]
        except NoSuchNamespaceError:
            return []

    def inventory(self) -> Inventory:
        """Every namespace, nested ones included, and every table: what ``import`` patterns select from.
        Walks the namespaces through the catalog's own API, so any catalog type lists the same way."""
        from tablepolicy.compiler.importer import Inventory  # the policy writer's modules, loaded only by import

        tables: set[tuple[str, ...]] = set()
        namespaces = self._walk(lambda child: tables.update(map(tuple, self.catalog.list_tables(child))))
        return Inventory(frozenset(namespaces), frozenset(tables), frozenset(self.view_names(namespaces)))

    def _walk(self, visit: Callable[[tuple[str, ...]], object] = lambda _n: None) -> set[tuple[str, ...]]:
        """Every namespace, nested ones included, each passed to ``visit`` as it is found."""
        namespaces: set[tuple[str, ...]] = set()
        pending: list[tuple[str, ...]] = [()]
        try:
            while pending:
                parent = pending.pop()
                for child in map(tuple, self.catalog.list_namespaces(parent)):
                    if child in namespaces or child[:len(parent)] != parent or len(child) <= len(parent):
                        continue  # a catalog that answers with itself or another level would loop
                    namespaces.add(child)
                    pending.append(child)
                    visit(child)
        except Exception as exc:
            raise CatalogError(f"cannot list the namespaces and tables of {self.config.describe()}: "
                               f"{_clean(exc, self.config)}") from None
        return namespaces

    def _rest_view(self, name: tuple[str, ...]) -> CurrentView | None:
        """A REST catalog's view: its load-view answer (the metadata location and document), through pyiceberg's
        authenticated session; the server's own words when it refuses (one serving no view endpoints among them),
        for this view alone."""
        from pyiceberg.catalog.rest import Capability, Endpoints
        from requests import HTTPError

        catalog: Any = self.catalog
        if Capability.V1_LOAD_VIEW not in catalog._supported_endpoints:
            raise CatalogError(f"cannot read view {'.'.join(name)} from {self.config.describe()}: the server lists no "
                               "view endpoints in its /v1/config answer and view-endpoints-supported is false; if it "
                               "serves views, set view-endpoints-supported: true in the catalog's definition, else "
                               "declare views for another catalog (its tables plan and apply without them)")
        try:
            url = catalog.url(Endpoints.load_view, prefixed=True, namespace=catalog._encode_namespace_path(name[:-1]),
                              view=name[-1])
            response = catalog._session.get(url)
            if response.status_code == 404 and "NoSuchView" in response.text:
                return None
            response.raise_for_status()
            answer = json.loads(response.text)
            return current_view(name, str(answer["metadata-location"]), answer["metadata"])
        except HTTPError as exc:
            said = _server_said(exc.response)
            raise CatalogError(f"cannot read view {'.'.join(name)} from {self.config.describe()}: the server answered "
                               f"{said}; if it serves no views, declare views for another catalog (its tables plan "
                               "and apply without them)") from None
        except (ViewFormatError, ValueError, KeyError, OSError) as exc:
            raise CatalogError(f"cannot read view {'.'.join(name)} from {self.config.describe()}: "
                               f"{_clean(exc, self.config)}") from None

    @property
    def reads_views(self) -> bool:
        """Whether this catalog's views can be read (a SQL catalog: Iceberg's JDBC catalog; a REST catalog)."""
        return getattr(self.catalog, "engine", None) is not None or self.config.kind == "rest"

    def view_names(self, namespaces: set[tuple[str, ...]] | None = None) -> list[tuple[str, ...]]:
        """Every view of a SQL or REST catalog (none for other catalogs, whose views are not read); ``namespaces``:
        a REST catalog's, when already walked."""
        engine = getattr(self.catalog, "engine", None)
        if engine is None and self.config.kind == "rest":
            walked = self._walk() if namespaces is None else namespaces
            try:
                return sorted(tuple(v) for ns in sorted(walked) for v in self.catalog.list_views(ns))
            except Exception as exc:
                raise CatalogError(f"cannot list the views of {self.config.describe()}: "
                                   f"{_clean(exc, self.config)}") from None
        if engine is None:
            return []
        from sqlalchemy import text

        query = text("SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name = :name AND "
                     "iceberg_type = 'VIEW'")
        try:
            with engine.connect() as connection:
                rows = connection.execute(query, {"name": self.catalog.name}).all()
        except Exception as exc:
            if "iceberg_type" in str(exc):  # a catalog schema without the column (V0) holds no views
                return []
            raise CatalogError(f"cannot list the views of {self.config.describe()}: {_clean(exc, self.config)}") \
                from None
        return sorted((*str(ns).split("."), str(name)) for ns, name in rows)


def _server_said(response: Any) -> str:
    """A REST error answer in a few words: ``404 NoSuchViewException: ...`` (the status and the server's message)."""
    try:
        error = json.loads(response.text)["error"]
        return f"{response.status_code} {error.get('type', '')}: {error.get('message', '')}".strip()
    except (ValueError, KeyError, TypeError, AttributeError):
        return f"{getattr(response, 'status_code', '?')} {getattr(response, 'text', '')[:200]}".strip()
