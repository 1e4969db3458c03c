"""Where the Iceberg runtime, JDBC driver and S3A jars come from, in order: the user's explicit config, the
pip-installed Iceberg runtime, Debian's drivers and the S3A jars ``make install`` puts in
``<venv>/share/tablepolicy/jars/`` (scripts/s3a-jars.sh), then Maven coordinates for machines with internet."""

from __future__ import annotations

import glob
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

ICEBERG_PACKAGE = "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.2"
ICEBERG_WHEEL = "snowpark_connect_deps_iceberg"


@dataclass(frozen=True)
class Driver:
    jar_paths: tuple[str, ...]  # Debian's libxerial-sqlite-jdbc-java / libpostgresql-jdbc-java
    package: str
    jni_glob: str | None = None  # Debian builds the SQLite driver against a system JNI library


DRIVERS = {
    "sqlite": Driver(("/usr/share/java/sqlite-jdbc.jar",), "org.xerial:sqlite-jdbc:3.46.1.3",
                     "/usr/lib/*/jni/libsqlitejdbc.so"),
    "postgresql": Driver(("/usr/share/java/postgresql.jar",), "org.postgresql:postgresql:42.7.4"),
}


# Hadoop's S3A connector and the AWS SDK v1 it is built on: in neither pyspark nor the Iceberg wheel
S3A_JARS = ("hadoop-aws-3.3.1.jar", "aws-java-sdk-bundle-1.11.901.jar")
S3A_PACKAGES = ("org.apache.hadoop:hadoop-aws:3.3.4", "com.amazonaws:aws-java-sdk-bundle:1.12.262")


def s3a_jar_dir() -> Path:
    return Path(sys.prefix) / "share" / "tablepolicy" / "jars"


def s3a_jars() -> list[str] | None:
    """The installed S3A jars, or None unless both are there (half a connector is none)."""
    found = [s3a_jar_dir() / name for name in S3A_JARS]
    return [str(p) for p in found] if all(p.is_file() for p in found) else None


@dataclass
class JarPlan:
    jars: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    library_path: list[str] = field(default_factory=list)


def iceberg_runtime_jar() -> str | None:
    spec = importlib.util.find_spec(ICEBERG_WHEEL)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("jars/iceberg-spark-runtime-3.5_2.12-*.jar"))
        if found:
            return str(found[-1])
    return None


def resolve_jars(driver: str | None, explicit: str | None = None, object_storage: bool = False) -> JarPlan:
    """``object_storage``: the catalog's warehouse is on S3, so without local S3A jars Maven's are needed."""
    plan = JarPlan()
    if explicit:  # the user's spark.jars wins and is taken as complete
        plan.jars = [j for j in explicit.split(",") if j]
        return plan
    runtime = iceberg_runtime_jar()
    if runtime:
        plan.jars.append(runtime)
    else:
        plan.packages.append(ICEBERG_PACKAGE)
    # Every local driver goes on the classpath: the driver JVM outlives a session, so a later session
    # in the same process (another catalog) cannot add a JDBC driver the first one lacked.
    for name, spec in DRIVERS.items():
        local = next((p for p in spec.jar_paths if Path(p).is_file()), None)
        if local:
            plan.jars.append(local)
            if spec.jni_glob:
                plan.library_path += sorted({str(Path(p).parent) for p in glob.glob(spec.jni_glob)})
        elif name == driver:
            plan.packages.append(spec.package)
    # Likewise the S3A jars whenever installed: a later session of the same JVM may need them
    s3a = s3a_jars()
    if s3a:
        plan.jars += s3a
    elif object_storage:
        plan.packages += S3A_PACKAGES
    return plan
