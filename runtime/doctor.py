"""``tablepolicy doctor``: is this machine set up for the selected catalog? (the habit of ``dbt debug``)

Each check is one result, ✓ or ✗, saying what was checked and, when it failed, how to fix it: the catalog
configuration and its connection (namespaces listed through pyiceberg), the warehouse (listed and read through
pyiceberg's FileIO; with ``write_probe`` also written, read back and deleted), Java, pyspark, the jars Spark would
load and a standalone Spark master's port. No JVM starts and pyspark is never imported: the checks that need
neither work on a machine without Java, and the whole run takes seconds. Every text a check returns passes
through the catalog's redaction, so no credential reaches the output; no check raises.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.fs

from tablepolicy.compiler.catalog.config import CatalogConfig, embedded_root
from tablepolicy.compiler.errors import TablePolicyError

from .target import Target

if TYPE_CHECKING:
    from pyiceberg.catalog import Catalog
    from pyiceberg.io import FileIO

S3_SCHEMES = ("s3", "s3a", "s3n")
PROBE_FOLDER = ".tablepolicy-doctor"
# doctor answers in seconds even when a store does not: short S3 timeouts and one attempt, unless the catalog
# sets its own timeouts
PROBE_PROPERTIES = {"s3.connect-timeout": "3", "s3.request-timeout": "10",
                    "s3.retry-strategy-impl": "tablepolicy.runtime.doctor.SingleAttempt"}
MAX_MESSAGE = 300


class SingleAttempt(pyarrow.fs.AwsStandardS3RetryStrategy):  # type: ignore[misc]
    """pyarrow's S3 retry strategy with one attempt: a server that is down fails the check at once."""

    def __init__(self) -> None:
        super().__init__(max_attempts=1)


@dataclass(frozen=True)
class Check:
    """One line of the report: ``name`` (what was checked), ``ok``, ``detail`` (what was found) and, when not
    ok, ``fix`` (what to do)."""

    name: str
    ok: bool
    detail: str
    fix: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix or None}


@dataclass(frozen=True)
class DoctorReport:
    catalog: CatalogConfig
    target: Target
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def as_json(self) -> dict[str, Any]:
        """``catalog`` first, as in every JSON report of the project."""
        return {"catalog": self.catalog.summary(), "environment": self.target.environment_name, "ok": self.ok,
                "checks": [c.as_json() for c in self.checks]}


def doctor(target: Target, *, write_probe: bool = False, master: str | None = None,
           tables: Sequence[tuple[str, ...]] = ()) -> DoctorReport:
    """Every check for ``target``'s catalog; ``write_probe``: also write, read back and delete one object under
    the warehouse; ``master``: the Spark master to reach (None: not checked); ``tables``: the selected tables,
    whose locations say what Spark needs beside the warehouse (one on S3: the S3A jars)."""
    config = target.catalog
    checks = [configuration(config)]
    connected, catalog = connection(config)
    checks.append(connected)
    properties = dict(catalog.properties) if catalog is not None else dict(config.properties)
    warehouse = properties.get("warehouse") or config.properties.get("warehouse")
    created = catalog is not None or not config.embedded
    checks += guarded("warehouse", lambda: storage(config, warehouse, properties, write_probe=write_probe,
                                                   created=created))
    checks += guarded("java", lambda: [java()]) + guarded("pyspark", lambda: [pyspark()])
    on_s3 = guarded_value(lambda: tables_on_s3(catalog, tables), [])
    checks += guarded("spark jars", lambda: jars(config, on_s3))
    if master is not None:
        checks += guarded("spark master", lambda: [spark_master(master)])
    checks += guarded("locks", lambda: [locks(config)])
    return DoctorReport(config, target, [_redacted(config, c) for c in checks])


def tables_on_s3(catalog: Catalog | None, tables: Sequence[tuple[str, ...]]) -> list[str]:
    """The selected tables the catalog holds on S3 (``s3://``, ``s3a://``, ``s3n://``), read from their locations
    (a REST catalog answers with the metadata: no file is read); a table that does not exist yet is none."""
    from .spark.catalog_conf import on_object_storage

    found = []
    for name in tables if catalog is not None else ():
        try:
            location = catalog.load_table(name).location()  # type: ignore[union-attr]
        except Exception:  # not created yet, or unreadable: the connection check speaks for the catalog
            continue
        if on_object_storage(location):
            found.append(".".join(name))
    return found


def guarded_value(run: Callable[[], list[str]], default: list[str]) -> list[str]:
    try:
        return run()
    except Exception:
        if os.environ.get("TABLEPOLICY_DEBUG"):
            raise
        return default


def guarded(name: str, run: Callable[[], list[Check]]) -> list[Check]:
    """A check's results; an exception none of them expected is a failed check too, never a traceback."""
    try:
        return run()
    except Exception as exc:
        if os.environ.get("TABLEPOLICY_DEBUG"):
            raise
        return [Check(name, False, f"the check itself failed: {_reason(exc)}",
                      "report it, with the output of TABLEPOLICY_DEBUG=1 tablepolicy doctor")]


# The values init's .pyiceberg.example.yaml leaves for the user to fill in: a copy not filled in yet is no catalog.
PLACEHOLDERS = re.compile(r"\b(USER|PASSWORD|HOST|BUCKET)\b")


def configuration(config: CatalogConfig) -> Check:
    shown = config.redacted()
    parts = [f"type {config.kind}", f"uri {shown.get('uri') or '(none)'}",
             f"warehouse {shown.get('warehouse') or '(none)'}"]
    embedded = " (embedded: nothing is configured)" if config.embedded else ""
    left = sorted({m.group(1) for key in ("uri", "warehouse") for m in
                   PLACEHOLDERS.finditer(config.properties.get(key, ""))})
    if left:
        detail = (f"{config.name}: {', '.join(parts)} still holds the template's placeholders for the "
                  f"{', '.join(w.lower() for w in left)}")
        return Check("catalog", False, detail, "fill in the real database user, password and host and the bucket "
                     "(in .pyiceberg.yaml, or the PYICEBERG_CATALOG__* variables CI sets from secrets)")
    return Check("catalog", True, f"{config.name}{embedded}: {', '.join(parts)}")


def connection(config: CatalogConfig) -> tuple[Check, Catalog | None]:
    """Namespaces listed through pyiceberg, as plan reads the catalog. An embedded catalog not created yet is
    left so: doctor creates nothing unless asked to probe."""
    root = embedded_root(config)
    if root is not None and not (root / "catalog.db").exists():
        return Check("connection", True, f"the embedded catalog is not created yet; the first plan or apply "
                                         f"creates it at {root / 'catalog.db'}"), None
    from .catalog.reader import open_catalog

    try:
        catalog = open_catalog(config)
        namespaces = sorted(".".join(n) for n in catalog.list_namespaces())
    except Exception as exc:
        return Check("connection", False, f"cannot list the namespaces of catalog '{config.name}': {_reason(exc)}",
                     _connection_fix(config, _reason(exc))), None
    listed = ", ".join(namespaces[:5]) + (", ..." if len(namespaces) > 5 else "")
    return Check("connection", True, f"listed {len(namespaces)} namespace(s)" + (f" ({listed})" if listed else "")
                 ), catalog


def _connection_fix(config: CatalogConfig, reason: str = "") -> str:
    """What to check first, from the error when it tells (a REST server refusing the credential: the credential)."""
    if config.kind == "rest" and "refused the catalog's credentials" in reason:
        return ("fix the catalog's credential (CLIENT_ID:SECRET) or token, then its oauth2-server-uri and scope; "
                "the uri answers")
    if config.kind == "rest" and "warehouse" in reason:
        return "set the catalog's warehouse to one the REST server serves; the uri answers"
    match config.kind:
        case "sql":
            return ("check the catalog's uri (database host, port, name, user and password) and that the database "
                    "accepts connections from this machine")
        case "rest":
            return "check the catalog's uri and that the REST server answers; check credential/token if it needs one"
        case "hive":
            return "check the catalog's uri (thrift://host:port) and that the metastore answers"
        case "glue":
            return "check the AWS region and credentials (glue.* / AWS_* settings) and Glue permissions"
        case other:
            return f"check the definition of catalog '{config.name}' (type {other}) in .pyiceberg.yaml"


def storage(config: CatalogConfig, warehouse: str | None, properties: dict[str, str], *, write_probe: bool,
            created: bool) -> list[Check]:
    """The warehouse listed and read (and, with ``write_probe``, written) through pyiceberg's FileIO."""
    if not warehouse:
        return [Check("warehouse", True, "no warehouse configured: the catalog decides where tables live; "
                                         "nothing to list")]
    if not created:
        return [Check("warehouse", True, f"{warehouse}: created with the embedded catalog")]
    if "://" not in warehouse and not warehouse.startswith("/"):
        return [Check("warehouse", True, f"'{warehouse}' is a name the catalog's server resolves, not a location; "
                                         "nothing to list")]
    from pyiceberg.io import load_file_io

    try:
        io = load_file_io({**PROBE_PROPERTIES, **properties}, location=warehouse)
        checks = [_list_and_read(io, warehouse)]
    except Exception as exc:
        return [Check("warehouse", False, f"cannot read {warehouse}: {_reason(exc)}", _storage_fix(exc, warehouse))]
    if write_probe and checks[0].ok:
        checks.append(_probe(io, warehouse))
    return checks


def _list_and_read(io: FileIO, warehouse: str) -> Check:
    fs, path, scheme = _filesystem(io, warehouse)
    if scheme in S3_SCHEMES:
        bucket = path.split("/", 1)[0]
        if fs.get_file_info(bucket).type == pyarrow.fs.FileType.NotFound:
            return Check("warehouse", False, f"bucket '{bucket}' of {warehouse} does not exist",
                         f"create bucket '{bucket}', or fix the catalog's warehouse (and s3.endpoint, when the store "
                         "is not AWS)")
    entries = fs.get_file_info(pyarrow.fs.FileSelector(path, allow_not_found=True))
    if not entries:
        return Check("warehouse", True, f"listed {warehouse}: empty, nothing to read yet")
    found = _first_file(fs, entries)
    if found is None:
        return Check("warehouse", True, f"listed {warehouse} ({len(entries)} entries); no file to read yet")
    uri = f"{scheme}://{found.path}" if scheme in S3_SCHEMES else found.path
    with io.new_input(uri).open() as stream:
        read = len(stream.read(1024))
    return Check("warehouse", True, f"listed {warehouse} ({len(entries)} entries), read {read} bytes of {uri}")


def _filesystem(io: FileIO, location: str) -> tuple[pyarrow.fs.FileSystem, str, str]:
    from pyiceberg.io.pyarrow import PyArrowFileIO

    if not isinstance(io, PyArrowFileIO):
        raise TablePolicyError(f"doctor lists the warehouse through pyiceberg's PyArrowFileIO; this catalog uses "
                               f"{type(io).__name__} (py-io-impl)")
    scheme, netloc, path = PyArrowFileIO.parse_location(location)
    return io.fs_by_scheme(scheme, netloc), path.rstrip("/"), scheme


def _first_file(fs: pyarrow.fs.FileSystem, entries: list[pyarrow.fs.FileInfo], depth: int = 6
                ) -> pyarrow.fs.FileInfo | None:
    """A file under the listed ``entries``, going down the first folder of each level (a few listings, never the
    whole warehouse)."""
    for _ in range(depth):
        files = [e for e in entries if e.type == pyarrow.fs.FileType.File]
        if files:
            return min(files, key=lambda e: e.path)
        folders = sorted((e for e in entries if e.type == pyarrow.fs.FileType.Directory), key=lambda e: e.path)
        if not folders:
            return None
        entries = fs.get_file_info(pyarrow.fs.FileSelector(folders[0].path, allow_not_found=True))
    return None


def _probe(io: FileIO, warehouse: str) -> Check:
    """One small object written under ``<warehouse>/.tablepolicy-doctor/``, read back, compared and deleted."""
    name = f"{warehouse.rstrip('/')}/{PROBE_FOLDER}/{uuid.uuid4().hex}.probe"
    payload = f"tablepolicy doctor write probe {name}\n".encode()
    step = "write"
    try:
        with io.new_output(name).create(overwrite=False) as stream:
            stream.write(payload)
        step = "read back"
        with io.new_input(name).open() as reading:
            back = reading.read()
        step = "delete"
        io.delete(name)
        _remove_probe_folder(io, name)
    except Exception as exc:
        left = f"; {name} is left behind: delete it" if step != "write" else ""
        return Check("write probe", False, f"cannot {step} {name}: {_reason(exc)}{left}",
                     _storage_fix(exc, warehouse, writing=True))
    if back != payload:
        return Check("write probe", False, f"wrote {len(payload)} bytes to {name} but read back {len(back)} "
                                           "different bytes (deleted it)",
                     "the store does not return what was written: check a proxy or gateway in front of it")
    return Check("write probe", True, f"wrote {len(payload)} bytes to {name}, read them back and deleted it")


def _remove_probe_folder(io: FileIO, name: str) -> None:
    """The probe's folder, once empty: a real folder on a local disk; on S3 the marker object pyarrow leaves
    when it deletes a folder's last object (deleting that marker leaves, in turn, an empty marker of the warehouse
    folder itself: pyarrow keeps a parent folder visible)."""
    fs, path, _ = _filesystem(io, name)
    folder = path.rsplit("/", 1)[0]
    if not fs.get_file_info(pyarrow.fs.FileSelector(folder, allow_not_found=True)):
        fs.delete_dir(folder)


def _storage_fix(exc: Exception, warehouse: str, *, writing: bool = False) -> str:
    text = str(exc)
    if any(s in text for s in ("SignatureDoesNotMatch", "InvalidAccessKeyId", "ACCESS_DENIED", "AccessDenied",
                               "Forbidden", "InvalidToken", "ExpiredToken")):
        may = "write and delete under" if writing else "list and read"
        return (f"check s3.access-key-id, s3.secret-access-key and s3.session-token (or AWS_* in the environment) "
                f"of the catalog, and that they may {may} {warehouse}")
    if "NoSuchBucket" in text:
        return "create the bucket, or fix the catalog's warehouse"
    if any(s in text for s in ("NETWORK_CONNECTION", "connect", "Connection", "timed out", "resolve")):
        return "check that s3.endpoint (or the store's address) is right and answers from this machine"
    if isinstance(exc, PermissionError) or "Permission denied" in text:
        return f"give this user access to {warehouse}"
    return f"check the catalog's warehouse ({warehouse}) and its s3.* / storage settings"


def java() -> Check:
    from .spark.session import SparkSetupError, check_java

    try:
        major = check_java()
    except SparkSetupError as exc:
        return Check("java", False, str(exc), "install Java 17 (apt-get install openjdk-17-jre-headless) or set "
                                              "JAVA_HOME to a Java 8, 11 or 17")
    except OSError as exc:
        return Check("java", False, f"java does not run: {_reason(exc)}",
                     "install Java 17 (apt-get install openjdk-17-jre-headless) or set JAVA_HOME")
    return Check("java", True, f"Java {major} (Spark 3.5 runs on 8, 11 or 17)")


def pyspark() -> Check:
    """pyspark's presence and version, read from its package metadata: never imported here."""
    fix = "pip install 'tablepolicy[spark]' (pyspark 3.5 and the Iceberg runtime)"
    if importlib.util.find_spec("pyspark") is None:
        return Check("pyspark", False, "pyspark is not installed", fix)
    try:
        version = importlib.metadata.version("pyspark")
    except importlib.metadata.PackageNotFoundError:
        return Check("pyspark", False, "pyspark is importable but has no package metadata (version unknown)", fix)
    if not version.startswith("3.5."):
        return Check("pyspark", False, f"pyspark {version}: the Iceberg runtime tablepolicy loads is built for Spark "
                                       "3.5 (Scala 2.12)", "pip install 'pyspark>=3.5,<3.6'")
    return Check("pyspark", True, f"{version} (Spark 3.5)")


def jars(config: CatalogConfig, on_s3: Sequence[str] = ()) -> list[Check]:
    """The jars a Spark session for ``config`` would load, as runtime/spark/jars.py resolves them for it; ``on_s3``:
    selected tables on S3, which need the S3A jars whatever the warehouse says."""
    from tablepolicy.compiler.errors import CatalogError

    from .spark.catalog_conf import spark_catalog
    from .spark.jars import ICEBERG_PACKAGE, resolve_jars

    try:
        derived = spark_catalog(config)
    except CatalogError as exc:
        return [Check("spark catalog", False, str(exc), "use a catalog type and backend Spark's Iceberg catalogs "
                                                        "support")]
    driver = derived.jdbc_driver
    storage = derived.object_storage or bool(on_s3)
    plan = resolve_jars(driver, None, storage)
    checks = [_jar("iceberg runtime", "iceberg-spark-runtime", plan.jars, plan.packages, ICEBERG_PACKAGE)]
    if driver is None:
        checks.append(Check("jdbc driver", True, f"none needed ({config.kind} catalog)"))
    else:
        checks.append(_jar(f"jdbc driver ({driver})", "sqlite-jdbc" if driver == "sqlite" else driver, plan.jars,
                           plan.packages, driver))
    if storage:
        check = s3a(plan.packages)
        if on_s3 and not derived.object_storage:  # the definition alone would not have asked for them
            shown = ", ".join(on_s3[:3]) + (", ..." if len(on_s3) > 3 else "")
            check = replace(check, detail=f"{check.detail}; needed for the tables on S3: {shown}")
        checks.append(check)
    return checks


def _jar(name: str, marker: str, jars: list[str], packages: list[str], package: str) -> Check:
    local = next((j for j in jars if marker in Path(j).name), None)
    if local is not None:
        return Check(name, True, local)
    remote = next((p for p in packages if marker in p or package in p), None)
    if remote is not None:
        return Check(name, True, f"not on this machine: Spark downloads {remote} from Maven Central when it starts "
                                 "(needs internet access)")
    return Check(name, False, "not found, and no Maven coordinate to fall back to",
                 "pip install 'tablepolicy[spark]' and Debian's libxerial-sqlite-jdbc-java / libpostgresql-jdbc-java")


def s3a(packages: list[str]) -> Check:
    """Hadoop's S3A jars for an S3 warehouse: where ``make install`` puts them, else Maven's (jars.py decides)."""
    from .spark.jars import S3A_PACKAGES, s3a_jar_dir, s3a_jars

    local = s3a_jars()
    if local:
        return Check("s3a jars", True, ", ".join(local))
    remote = [p for p in S3A_PACKAGES if p in packages]
    if remote:
        return Check("s3a jars", True, f"not in {s3a_jar_dir()}: Spark downloads {', '.join(remote)} from Maven "
                                       "Central when it starts (needs internet access)")
    return Check("s3a jars", False, f"hadoop-aws and aws-java-sdk-bundle are not in {s3a_jar_dir()} (Spark reads "
                                    "s3:// through Hadoop's S3A)",
                 "run make install (scripts/s3a-jars.sh puts them there), or pass --spark-conf spark.jars=...")


def spark_master(master: str) -> Check:
    """A standalone master's port answers a TCP connect (flags.check_master); other masters are only parsed."""
    from .flags import FlagError, check_master

    try:
        check_master(master, reach=True)
    except FlagError as exc:
        message, _, fix = str(exc).rpartition("; ")
        return Check("spark master", False, message or str(exc), fix if message else "fix --spark-master")
    if master.startswith("spark://"):
        return Check("spark master", True, f"{master} answers")
    kind = "runs inside this process's JVM" if master.startswith("local") else "not reached by doctor"
    return Check("spark master", True, f"{master}: {kind}")


def locks(config: CatalogConfig) -> Check:
    """Where apply, maintain and erase take their table locks (runtime/lock), and whether every runner sees them: a
    REST, Glue or Hive catalog without ``tablepolicy.lock-location`` would lock with files in this work tree alone,
    so two CI runners (two clones) could change one table at once."""
    from .lock.objects import LOCK_LOCATION, S3Settings

    if config.kind == "sql":
        uri = config.properties.get("uri", "")
        where = ("PostgreSQL advisory locks, released when a holder dies" if uri.startswith("postgresql")
                 else "files beside the SQLite database, seen by every run against it" if config.embedded or
                 uri.startswith("sqlite") else "rows in the catalog's database")
        return Check("locks", True, where)
    location = config.properties.get(LOCK_LOCATION)
    if not location:
        return Check("locks", False, f"a {config.kind} catalog without {LOCK_LOCATION}: apply, maintain and erase "
                     "would lock tables with files in this work tree's .tablepolicy/, which runs from another clone or "
                     "CI runner do not see", f"set {LOCK_LOCATION}: s3://BUCKET/PREFIX in the catalog's definition (a "
                     "bucket every runner can write; the locks are objects taken with S3 conditional writes)")
    try:
        S3Settings.of(location, dict(config.properties))
    except ValueError as exc:
        return Check("locks", False, str(exc), f"fix {LOCK_LOCATION} in the catalog's definition")
    return Check("locks", True, f"objects under {location}, taken with S3 conditional writes: every runner sees them")


def _reason(exc: BaseException) -> str:
    """The error's first line in words: no exception class, no driver's "(sqlite3.OperationalError) " prefix
    (TABLEPOLICY_DEBUG=1 shows the traceback for a report)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = re.sub(r"^\((?:[\w.]+)\) ", "", first) or "it failed without a message"
    return shortened(text)


def shortened(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text``, or its sentences (else words) that fit ``limit``, saying how much was left out: a message is never
    cut inside a word or mid-sentence without a word about it.

    >>> shortened("First part. Second part is long.", 20)
    'First part. (21 more characters not shown)'
    """
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = max(head.rfind(". "), head.rfind("; "), head.rfind(": "))
    cut = cut + 1 if cut > limit // 3 else head.rfind(" ")
    kept = (head[:cut] if cut > 0 else head).rstrip(" ;:,")
    return f"{kept} ({len(text) - len(kept)} more characters not shown)"


def _redacted(config: CatalogConfig, check: Check) -> Check:
    clean: Callable[[str], str] = config.redact
    return replace(check, detail=clean(check.detail), fix=clean(check.fix))


def selected_tables(path: Path) -> list[tuple[str, ...]]:
    """The tables the policies under ``path`` declare present (none when it holds no policies, or unreadable ones:
    validate speaks for them)."""
    from tablepolicy.compiler.loader import load_project

    if not path.exists():
        return []
    try:
        project, _ = load_project(path)
    except Exception:
        return []
    return [t.name for t in project.tables if t.state == "present"]
