"""One catalog definition serves both engines: pyiceberg's config -> Spark's Iceberg catalog config.

A pyiceberg SQL catalog on SQLite or PostgreSQL becomes Iceberg's JDBC catalog over the same two
tables (``iceberg_tables``, ``iceberg_namespace_properties``); REST, Glue and Hive map likewise.

Object storage: pyiceberg reads ``s3://``, ``s3a://`` and ``s3n://`` with its ``s3.*`` properties (falling back
to the ``client.*`` ones); Spark reads the same files through Hadoop's S3A with HadoopFileIO, configured from
those properties, with the ``s3`` and ``s3n`` schemes served by S3A too, so a table whose metadata says
``s3://`` is read by Spark as pyiceberg reads it. Iceberg's S3FileIO is used only when the definition names it
(``io-impl``): its AWS SDK v2 bundle is not on the classpath otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlparse

from sqlalchemy.engine import make_url

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.errors import CatalogError

# pyiceberg properties that mean the same to Iceberg's Java catalogs
_PASSTHROUGH = ("warehouse", "credential", "token", "scope", "oauth2-server-uri", "prefix")
# with a FileIO the user named, its own properties go to it as written
_FILEIO_PREFIXES = ("s3.", "client.")

S3_SCHEMES = ("s3", "s3a", "s3n")
HADOOP_FILE_IO = "org.apache.iceberg.hadoop.HadoopFileIO"
S3A_FILESYSTEM = "org.apache.hadoop.fs.s3a.S3AFileSystem"
SIMPLE_CREDENTIALS = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
TEMPORARY_CREDENTIALS = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
# Iceberg's RESTCatalog: a server whose /v1/config lists no endpoints (SeaweedFS 4.48 among them) is taken to serve
# no view endpoints, and Spark refuses every view before asking; with this set the server answers for itself. Its
# HTTP client waits without bound by default: these bound it (a definition's own value wins). A timeout is not
# retried (ExponentialHttpRequestRetryStrategy: an InterruptedIOException); an idempotent request answered 408, 429
# or 5xx is, max-retries times after 1, 2, 4 s (Iceberg's default of 5 waits 31 s per request); a commit answered
# 5xx is CommitStateUnknownException, never retried.
# The access-delegation header pyiceberg sends by default goes to Spark's RESTCatalog too (Iceberg Java sends none
# unless told), so both engines ask the server for the same thing; other header.* settings pass through as written.
DELEGATION = "header.X-Iceberg-Access-Delegation"
REST_DEFAULTS = {"view-endpoints-supported": "true", "rest.client.connection-timeout-ms": "5000",
                 "rest.client.socket-timeout-ms": "30000", "rest.client.max-retries": "3",
                 DELEGATION: "vended-credentials"}
# S3A retries a dead endpoint for minutes with Hadoop's defaults (20 attempts, 7 retries with backoff, 60 s
# timeouts): a store that stops mid-run must end the run with an error within a bound (README, "Catalogs").
# Set in the session before it starts; --spark-conf spark.hadoop.fs.s3a.* overrides each.
S3A_BOUNDS = {"attempts.maximum": "2", "retry.limit": "2", "retry.interval": "500ms",
              "connection.establish.timeout": "5000", "connection.timeout": "20000"}
NESSIE_HINT = ("pyiceberg 0.12 has no 'nessie' catalog type; Nessie serves the Iceberg REST API: define the catalog "
               "as type: rest with uri: http://HOST:19120/iceberg/BRANCH (e.g. .../iceberg/main)")


@dataclass(frozen=True)
class SparkCatalog:
    conf: dict[str, str]  # spark.sql.catalog.<name>*: settable on a running session
    jdbc_driver: str | None  # "sqlite" | "postgresql" when the JDBC catalog needs a driver jar
    hadoop: dict[str, str] = field(default_factory=dict, repr=False)  # spark.hadoop.*: fixed when the session starts
    object_storage: bool = False  # the warehouse is on S3 (or the catalog is Glue's): the S3A jars are needed


def on_object_storage(location: str) -> bool:
    return urlparse(location).scheme.lower() in S3_SCHEMES


def uses_object_storage(config: CatalogConfig) -> bool:
    """The catalog's tables are on S3 as far as its definition tells: an ``s3://`` warehouse, Glue, or S3 settings
    read through Hadoop's FileIO (a REST catalog's warehouse is usually a name, its tables on S3 all the same).
    Where a selected table really lives is checked from its location (``doctor``: runtime/doctor.py)."""
    props = config.properties
    hadoop_io = props.get("io-impl", HADOOP_FILE_IO) == HADOOP_FILE_IO  # S3FileIO needs no S3A
    return (on_object_storage(props.get("warehouse", "")) or config.kind == "glue"
            or (hadoop_io and any(k.startswith("s3.") for k in props)))


def spark_catalog(config: CatalogConfig) -> SparkCatalog:
    prefix = f"spark.sql.catalog.{config.name}"
    # no table cache: other writers commit to the same tables, tablepolicy's own pyiceberg commits among them
    # (erasure's, runtime/erasure/commits.py), and a cached table is read as it was, down to manifests an
    # expiry has deleted since
    conf = {prefix: "org.apache.iceberg.spark.SparkCatalog", f"{prefix}.cache-enabled": "false"}
    props = config.properties
    for key in _PASSTHROUGH:
        if key in props:
            conf[f"{prefix}.{key}"] = props[key]
    if "io-impl" in props:  # the user's FileIO, configured by the definition's own properties
        conf[f"{prefix}.io-impl"] = props["io-impl"]
        conf |= {f"{prefix}.{k}": v for k, v in sorted(props.items()) if k.startswith(_FILEIO_PREFIXES)}
    else:
        conf[f"{prefix}.io-impl"] = HADOOP_FILE_IO
    driver: str | None = None
    match config.kind:
        case "sql":
            jdbc, extra, driver = _jdbc(props.get("uri", ""))
            conf |= {f"{prefix}.type": "jdbc", f"{prefix}.uri": jdbc, f"{prefix}.jdbc.schema-version": "V1"}
            conf |= {f"{prefix}.{k}": v for k, v in extra.items()}
        case "rest":
            conf |= {f"{prefix}.type": "rest", f"{prefix}.uri": props["uri"]}
            conf |= {f"{prefix}.{k}": props.get(k, v) for k, v in REST_DEFAULTS.items()}
            conf |= {f"{prefix}.{k}": v for k, v in sorted(props.items()) if k.startswith(("rest.client.", "header."))}
        case "glue":
            conf |= {f"{prefix}.type": "glue"}
            if "client.region" in props:
                conf[f"{prefix}.client.region"] = props["client.region"]
        case "hive":
            conf |= {f"{prefix}.type": "hive", f"{prefix}.uri": props["uri"]}
        case "nessie":
            raise CatalogError(NESSIE_HINT)
        case other:
            raise CatalogError(f"catalog type '{other}' has no Spark mapping; set 'type' of catalog '{config.name}' "
                               "(.pyiceberg.yaml) to sql, rest, glue or hive")
    storage = uses_object_storage(config)
    hadoop = hadoop_s3(props)
    if config.kind == "sql" and not props.get("warehouse"):  # Iceberg's JDBC catalog cannot start without one
        raise CatalogError(
            f"{config.describe()} has no warehouse, which Spark's JDBC catalog needs; set 'warehouse' of "
            f"catalog '{config.name}' (.pyiceberg.yaml, or PYICEBERG_CATALOG__{config.name.upper()}__WAREHOUSE) to "
            "the location of its tables (a file:// path or s3:// URI)")
    return SparkCatalog(conf, driver, hadoop, storage)


def _first(props: dict[str, str], *keys: str) -> str | None:
    """pyiceberg's get_first_property_value: ``s3.*`` first, then the ``client.*`` property of the same meaning."""
    return next((props[k] for k in keys if props.get(k)), None)


def hadoop_s3(props: dict[str, str]) -> dict[str, str]:
    """Hadoop's S3A settings from pyiceberg's S3 properties, as ``spark.hadoop.*`` session settings.

    As pyiceberg's PyArrowFileIO: keys from ``s3.access-key-id``/``s3.secret-access-key``/``s3.session-token``
    (else ``client.*``); none there, and the AWS SDK's own chain applies (pyiceberg: pyarrow's; Spark: S3A's
    default providers, which read AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; Spark also
    copies those into fs.s3a.* itself), so no key is copied here from the environment. Path-style addressing
    as pyarrow decides it: virtual-host addressing only without a custom endpoint, unless
    ``s3.force-virtual-addressing`` says otherwise; ``s3.path-style-access`` (Iceberg Java's S3FileIO
    property) wins when given.
    """
    h = "spark.hadoop.fs.s3a."
    conf = {"spark.hadoop.fs.s3.impl": S3A_FILESYSTEM, "spark.hadoop.fs.s3n.impl": S3A_FILESYSTEM}
    conf |= {h + k: v for k, v in S3A_BOUNDS.items()}
    endpoint = props.get("s3.endpoint")
    if endpoint:
        conf[h + "endpoint"] = endpoint
        if endpoint.lower().startswith("http://"):
            conf[h + "connection.ssl.enabled"] = "false"
    if "s3.path-style-access" in props:
        conf[h + "path.style.access"] = _bool(props["s3.path-style-access"])
    elif "s3.force-virtual-addressing" in props:
        conf[h + "path.style.access"] = "false" if _bool(props["s3.force-virtual-addressing"]) == "true" else "true"
    elif endpoint:
        conf[h + "path.style.access"] = "true"
    region = _first(props, "s3.region", "client.region")
    if region:
        conf[h + "endpoint.region"] = region
    access = _first(props, "s3.access-key-id", "client.access-key-id")
    secret = _first(props, "s3.secret-access-key", "client.secret-access-key")
    token = _first(props, "s3.session-token", "client.session-token")
    if access and secret:
        conf |= {h + "access.key": access, h + "secret.key": secret}
        conf[h + "aws.credentials.provider"] = SIMPLE_CREDENTIALS
        if token:
            conf |= {h + "session.token": token, h + "aws.credentials.provider": TEMPORARY_CREDENTIALS}
    elif access or secret or token:
        raise CatalogError("the catalog's S3 credentials are incomplete: s3.access-key-id and s3.secret-access-key "
                           "go together (with s3.session-token for temporary credentials)")
    if _bool(props.get("s3.anonymous", "false")) == "true":
        conf[h + "aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"
    return conf


def _bool(value: str) -> str:
    return "true" if value.strip().lower() in ("true", "1", "yes", "on") else "false"


def _jdbc(uri: str) -> tuple[str, dict[str, str], str]:
    """SQLAlchemy URI -> (JDBC URL, extra catalog properties, driver name)."""
    try:
        url = make_url(uri)
    except Exception:
        raise CatalogError("the SQL catalog's uri is not a SQLAlchemy URL (e.g. sqlite:///path/catalog.db)") from None
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise CatalogError("an in-memory SQLite catalog cannot be shared with Spark; use a file path")
        # the settings pyiceberg's side uses too (tablepolicy.runtime.catalog.reader): WAL and a busy timeout
        return f"jdbc:sqlite:{url.database}?journal_mode=WAL&busy_timeout=30000", {}, "sqlite"
    if backend == "postgresql":
        port = f":{url.port}" if url.port else ""
        extra = {}
        if url.username:
            extra["jdbc.user"] = url.username
        if url.password:
            extra["jdbc.password"] = str(url.password)
        return f"jdbc:postgresql://{url.host or 'localhost'}{port}/{url.database}", extra, "postgresql"
    raise CatalogError(f"SQL catalog backend '{backend}' is not supported with Spark; use sqlite or postgresql")
