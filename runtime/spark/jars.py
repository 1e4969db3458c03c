"""Where the Iceberg runtime and JDBC driver jars come from, in order: the user's explicit config, the
pip-installed Iceberg runtime and Debian's drivers, then Maven coordinates for machines with internet."""

from __future__ import annotations

import glob
import importlib.util
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


def resolve_jars(driver: str | None, explicit: str | None = None) -> JarPlan:
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
    return plan
