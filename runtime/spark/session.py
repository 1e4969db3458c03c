"""Build the one Spark session of a run from the catalog definition the planner used."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.errors import TablePolicyError

from ..redaction import register
from .catalog_conf import spark_catalog
from .jars import resolve_jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CONF_DIR = Path(__file__).with_name("conf")  # log4j2.properties: Spark logs errors only


class SparkSetupError(TablePolicyError):
    """Java, pyspark or a jar is missing: the message says what to install."""


@dataclass(frozen=True)
class SparkOptions:
    master: str = "local[2]"
    conf: dict[str, str] = field(default_factory=dict)
    app_name: str = "tablepolicy"
    # a table the run touches is on S3 though the catalog's definition does not say so: the S3A jars are needed
    # (Maven's when none are installed), as for an s3:// warehouse
    object_storage: bool = False

    @classmethod
    def from_flags(cls, master: str, conf: list[str]) -> SparkOptions:
        """From --spark-master and repeated --spark-conf key=value (checked by the CLI before any work)."""
        return cls(master=master, conf=dict(item.split("=", 1) for item in conf))


def check_java() -> str:
    """The Java major version; raise with the fix when Java is missing or too old."""
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        raise SparkSetupError(
            "Java was not found: Spark needs Java 17. Install it (apt-get install openjdk-17-jre-headless) "
            "or set JAVA_HOME"
        )
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False).stderr
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    major = int(match[1]) if match else 0
    major = int(match[2]) if match and major == 1 and match[2] else major
    if major not in (8, 11, 17):
        raise SparkSetupError(f"Spark 3.5 runs on Java 8, 11 or 17; found Java {major or 'unknown'} at {java}")
    return str(major)


def session_conf(catalog: CatalogConfig, options: SparkOptions) -> dict[str, str]:
    """Every Spark setting of the session, user settings last so they win."""
    derived = spark_catalog(catalog)
    jars = resolve_jars(derived.jdbc_driver, options.conf.get("spark.jars"),
                        derived.object_storage or options.object_storage)
    java_opts = f"-Djava.library.path={':'.join(jars.library_path)}" if jars.library_path else ""
    conf = {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        **derived.hadoop,
        **derived.conf,
    }
    if java_opts:
        conf |= {"spark.driver.extraJavaOptions": java_opts, "spark.executor.extraJavaOptions": java_opts}
    if jars.jars and options.master.startswith("local"):
        # the driver is the only JVM: jars on its classpath are read in place (spark.jars would copy 40 MB into
        # a temp dir and load it through another class loader first: a second of every start)
        conf["spark.driver.extraClassPath"] = os.pathsep.join(jars.jars)
    elif jars.jars:
        conf["spark.jars"] = ",".join(jars.jars)
    if jars.packages:
        conf["spark.jars.packages"] = ",".join(jars.packages)
    if options.master.startswith(("local", "spark://")):
        conf |= {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    return conf | options.conf


def start_in_background(catalog: CatalogConfig, options: SparkOptions) -> Future[SparkSession]:
    """Start the session on a thread: the JVM takes seconds to boot, time the caller spends on other checks."""
    starting = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spark-start")
    session = starting.submit(start_session, catalog, options)
    starting.shutdown(wait=False)
    return session


class SessionOnDemand:
    """A session started on a thread the first time a run knows it will need one, and waited for only when the
    work begins: maintain starts it when the first table with due work is decided, so the JVM boots while the
    other tables' health is still being read; a run that finds nothing to do never starts it."""

    def __init__(self, catalog: CatalogConfig, options: SparkOptions) -> None:
        self.catalog, self.options = catalog, options
        self._starting: Future[SparkSession] | None = None

    def start(self) -> None:
        if self._starting is None:
            self._starting = start_in_background(self.catalog, self.options)

    @property
    def ready(self) -> bool:
        return self._starting is not None and self._starting.done()

    def session(self) -> SparkSession:
        """The session, once started (now, if nothing asked for it before); Spark's setup error if it failed."""
        self.start()
        assert self._starting is not None
        return self._starting.result()


def start_session(catalog: CatalogConfig, options: SparkOptions) -> SparkSession:
    register(catalog)  # Spark's messages about this catalog's tables are masked with its secrets
    check_java()
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkSetupError(
            "pyspark is not installed: pip install 'tablepolicy[spark]' (Spark 3.5 with the Iceberg runtime)"
        ) from None
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("SPARK_CONF_DIR", str(CONF_DIR))
    builder = SparkSession.builder.master(options.master).appName(options.app_name)
    conf = session_conf(catalog, options)
    for key, value in conf.items():
        builder = builder.config(key, value)
    handle, name = tempfile.mkstemp(prefix="tablepolicy-spark-", suffix=".log")  # this process's JVM writes here
    os.close(handle)  # created 0600 under a name no one can guess or plant a link at
    log = Path(name)
    launched = False
    try:
        launched = _launch_quietly(options, conf, log)
        spark = builder.getOrCreate()
    except Exception as exc:
        hint = ""
        if "spark.jars.packages" in conf:
            hint = (f"; it had to download {conf['spark.jars.packages']} from Maven: without internet access, "
                    "install tablepolicy[spark] (the Iceberg runtime wheel) and Debian's libxerial-sqlite-jdbc-java "
                    "and libpostgresql-jdbc-java, or pass --spark-conf spark.jars=...")
        reason = catalog.redact(_reason(exc, log))
        where = f" (Spark's log: {log})" if log.exists() else ""
        raise SparkSetupError(f"Spark did not start with --spark-master {options.master!r}: {reason}{hint}{where}"
                              ) from None
    if launched:
        atexit.register(log.unlink, missing_ok=True)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _launch_quietly(options: SparkOptions, conf: dict[str, str], log: Path) -> bool:
    """Start the JVM with its output in ``log``, so Spark's own lines and Java stack traces stay off the
    user's screen; False when this process already has a JVM (a second session reuses it)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return False
    spark_conf = SparkConf(loadDefaults=False)
    spark_conf.setAll([("spark.master", options.master), ("spark.app.name", options.app_name), *conf.items()])
    with log.open("w", encoding="utf-8") as stream:
        gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": stream, "stderr": stream})  # type: ignore[no-untyped-call]
    SparkContext._ensure_initialized(gateway=gateway)
    return True


def _reason(exc: Exception, log: Path) -> str:
    """One line saying why Spark did not start: the root cause the log names (the last "Caused by", else the
    exception the JVM died of), else the exception Python saw."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.exists() else []
    causes = [line for line in lines if line.startswith("Caused by: ")]
    died = [line for line in lines if line.startswith("Exception in thread ")]
    java = getattr(exc, "java_exception", None)
    first = (causes[-1:] or died[:1] or [str(java) if java is not None else str(exc) or repr(exc)])[0]
    first = first.splitlines()[0] if first else repr(exc)
    return re.sub(r"^(Exception in thread \"[^\"]*\" |Caused by: )?([\w.$]+(Exception|Error): )?", "", first)
