"""``tablepolicy doctor`` against real components: the embedded SQLite catalog on local disk with a table created
through pyiceberg, and a SQL catalog whose warehouse is ``s3://lake/wh`` on a local S3 server (moto). The CLI runs
in this process (tests/cli_runner.py); no JVM starts. No output ever holds a credential, and no check raises."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from tests.catalog_fixtures import create_examples
from tests.cli_runner import Run, process_env
from tests.cli_runner import tablepolicy as tool
from tests.pgserver import free_port
from tests.s3server import ACCESS_KEY, REGION, SECRET_KEY, S3Server, s3_server

ROOT = Path(__file__).resolve().parents[2]
SESSION_TOKEN = "tp-test-session-token-do-not-print"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    return tmp_path


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.bucket("lake")
        yield server


def lines(run: Run) -> dict[str, str]:
    """The report's check lines by check name: ``{"warehouse": "✓ warehouse: listed ..."}``."""
    found = {}
    for line in run.stdout.splitlines():
        if line[:2] in ("✓ ", "✗ "):
            found[line[2:].split(":", 1)[0]] = line
    return found


def catalog_env(project: Path, warehouse: str, properties: dict[str, str], name: str = "PROD") -> dict[str, str]:
    """A pyiceberg SQL catalog on SQLite defined by PYICEBERG_CATALOG__* variables, as a user writes them."""
    env = {f"PYICEBERG_CATALOG__{name}__URI": f"sqlite:///{project / 'catalog.db'}",
           f"PYICEBERG_CATALOG__{name}__WAREHOUSE": warehouse}
    return env | {f"PYICEBERG_CATALOG__{name}__{key.upper().replace('.', '__').replace('-', '_')}": value
                  for key, value in properties.items()}


def assert_clean(run: Run, *secrets: str) -> None:
    """No traceback, and none of ``secrets`` (nor the S3 server's keys) anywhere in the output."""
    out = run.stdout + run.stderr
    assert "Traceback" not in out
    for secret in (SECRET_KEY, ACCESS_KEY, SESSION_TOKEN, *secrets):
        assert secret not in out, f"{secret!r} printed"


def test_embedded_catalog_with_a_table_all_pass(project: Path) -> None:
    create_examples(project / "policies")
    run = tool("doctor", "policies", "--write-probe", cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("Catalog: lake (sql, sqlite:///")
    checks = lines(run)
    assert all(line.startswith("✓") for line in checks.values()), run.stdout
    assert {"catalog", "connection", "warehouse", "write probe", "java", "pyspark", "iceberg runtime",
            "jdbc driver (sqlite)"} <= set(checks)
    assert "listed 4 namespace(s) (ads, logs, privacy, security)" in checks["connection"]
    assert "read " in checks["warehouse"] and ".lake/warehouse/" in checks["warehouse"]
    assert "read them back and deleted it" in checks["write probe"]
    assert "s3a jars" not in checks  # a local warehouse needs no S3A
    assert not (project / ".lake" / "warehouse" / ".tablepolicy-doctor").exists()
    assert run.stdout.rstrip().endswith("checks: all passed")
    assert_clean(run)


def test_embedded_catalog_not_created_is_left_uncreated(project: Path) -> None:
    run = tool("doctor", "policies", cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "not created yet" in lines(run)["connection"]
    assert not (project / ".lake").exists()


def test_json_report_names_the_catalog_first(project: Path) -> None:
    create_examples(project / "policies")
    run = tool("doctor", "policies", "--format", "json", cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert next(iter(report)) == "catalog"
    assert report["catalog"]["name"] == "lake" and report["catalog"]["type"] == "sql"
    assert report["ok"] is True
    assert all(c["ok"] and c["fix"] is None for c in report["checks"])


def create_s3_table(project: Path, s3: S3Server) -> None:
    catalog = SqlCatalog("prod", uri=f"sqlite:///{project / 'catalog.db'}", warehouse="s3://lake/wh",
                         **s3.pyiceberg_properties())
    catalog.create_namespace_if_not_exists("logs")
    if not catalog.table_exists(("logs", "events")):
        catalog.create_table(("logs", "events"), Schema(NestedField(1, "id", LongType(), required=True),
                                                        NestedField(2, "body", StringType())))


def boto_keys(s3: S3Server) -> list[str]:
    client: Any = s3.client()
    return [o["Key"] for o in client.list_objects_v2(Bucket="lake").get("Contents", [])]


def test_s3_warehouse_all_pass_with_write_probe(project: Path, s3: S3Server) -> None:
    create_s3_table(project, s3)
    env = catalog_env(project, "s3://lake/wh", s3.pyiceberg_properties() | {"s3.session-token": SESSION_TOKEN})
    before = boto_keys(s3)
    run = tool("doctor", "policies", "--write-probe", cwd=project, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    checks = lines(run)
    assert all(line.startswith("✓") for line in checks.values()), run.stdout
    assert "listed 1 namespace(s) (logs)" in checks["connection"]
    assert "read " in checks["warehouse"] and "s3://lake/wh/" in checks["warehouse"]
    assert "s3://lake/wh/.tablepolicy-doctor/" in checks["write probe"] and "deleted" in checks["write probe"]
    assert "hadoop-aws" in checks["s3a jars"] and "aws-java-sdk-bundle" in checks["s3a jars"]
    after = boto_keys(s3)
    assert not any(".tablepolicy-doctor" in k for k in after)  # the probe and its folder are gone
    # pyarrow keeps a deleted folder's parent as an empty marker object: at most "wh/" is new, and empty
    assert set(after) - set(before) <= {"wh/"}
    client: Any = s3.client()
    assert all(client.head_object(Bucket="lake", Key=k)["ContentLength"] == 0 for k in set(after) - set(before))
    assert_clean(run)


def test_s3_warehouse_without_local_s3a_jars_names_maven(project: Path, s3: S3Server,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import tablepolicy.runtime.spark.jars as jars

    monkeypatch.setattr(jars, "s3a_jars", lambda: None)  # as on a machine without make install
    run = tool("doctor", "policies", cwd=project, env=catalog_env(project, "s3://lake/wh", s3.pyiceberg_properties()))
    assert run.returncode == 0, run.stdout + run.stderr
    line = lines(run)["s3a jars"]
    assert line.startswith("✓ s3a jars: not in ") and "org.apache.hadoop:hadoop-aws:" in line and "Maven" in line


def test_a_check_that_raises_is_a_failed_line(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tablepolicy.runtime.doctor as doctor_module

    def broken() -> None:
        raise RuntimeError("unexpected")

    monkeypatch.setattr(doctor_module, "pyspark", broken)
    run = tool("doctor", "policies", cwd=project)
    assert run.returncode == 1
    assert lines(run)["pyspark"] == ("✗ pyspark: the check itself failed: unexpected — fix: report it, "
                                     "with the output of TABLEPOLICY_DEBUG=1 tablepolicy doctor")
    assert lines(run)["java"].startswith("✓")  # the other checks still ran
    assert_clean(run)


def test_s3a_scheme_warehouse_is_read_the_same(project: Path, s3: S3Server) -> None:
    run = tool("doctor", "policies", cwd=project, env=catalog_env(project, "s3a://lake/wh", s3.pyiceberg_properties()))
    assert run.returncode == 0, run.stdout + run.stderr
    assert lines(run)["warehouse"].startswith("✓ warehouse: listed s3a://lake/wh")
    assert_clean(run)


def test_wrong_secret_key_fails_the_warehouse_and_is_never_printed(project: Path) -> None:
    wrong = "wrong-secret-key-not-for-output"
    with s3_server() as server:
        server.bucket("lake")
        key = authenticated(server)
        env = catalog_env(project, "s3://lake/wh", server.pyiceberg_properties() | {
            "s3.access-key-id": key, "s3.secret-access-key": wrong})
        run = tool("doctor", "policies", "--write-probe", cwd=project, env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    checks = lines(run)
    assert checks["warehouse"].startswith("✗ warehouse: cannot read s3://lake/wh"), run.stdout
    assert "fix: check s3.access-key-id, s3.secret-access-key" in checks["warehouse"]
    assert "write probe" not in checks  # nothing is written where nothing could be read
    assert checks["connection"].startswith("✓")  # the catalog itself (SQLite) is fine
    assert_clean(run, wrong, key)


def authenticated(server: S3Server) -> str:
    """Turns on moto's authentication (off by default: any key would do) with an IAM user that may use S3;
    returns its access key id."""
    import boto3

    iam = boto3.client("iam", endpoint_url=server.endpoint, aws_access_key_id=ACCESS_KEY,
                       aws_secret_access_key=SECRET_KEY, region_name=REGION)
    iam.create_user(UserName="doctor")
    iam.put_user_policy(UserName="doctor", PolicyName="s3", PolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
    key: str = iam.create_access_key(UserName="doctor")["AccessKey"]["AccessKeyId"]
    urllib.request.urlopen(urllib.request.Request(f"{server.endpoint}/moto-api/reset-auth", data=b"0",
                                                  headers={"Content-Type": "text/plain"}, method="POST"),
                           timeout=5).close()
    return key


def test_missing_bucket_is_named(project: Path, s3: S3Server) -> None:
    env = catalog_env(project, "s3://no-such-bucket/wh", s3.pyiceberg_properties())
    run = tool("doctor", "policies", "--write-probe", cwd=project, env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    warehouse = lines(run)["warehouse"]
    assert warehouse.startswith("✗ warehouse: bucket 'no-such-bucket' of s3://no-such-bucket/wh does not exist")
    assert "fix: create bucket 'no-such-bucket'" in warehouse
    assert "no-such-bucket" not in boto_keys(s3)
    assert_clean(run)


def test_stopped_server_fails_without_a_traceback(project: Path) -> None:
    """One attempt with short timeouts (runtime/doctor.py), never measured in seconds here: the machine's speed
    is no outcome. What the user sees is the ✗ line with the fix."""
    with s3_server() as server:
        server.bucket("lake")
        properties = server.pyiceberg_properties()
    env = catalog_env(project, "s3://lake/wh", properties)
    run = tool("doctor", "policies", "--write-probe", cwd=project, env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    warehouse = lines(run)["warehouse"]
    assert warehouse.startswith("✗ warehouse: cannot read s3://lake/wh"), run.stdout
    assert "fix: check that s3.endpoint" in warehouse
    assert_clean(run)


def test_unreachable_database_fails_the_connection_and_hides_its_password(project: Path) -> None:
    password = "hunter2-not-for-output"
    env = {"PYICEBERG_CATALOG__PROD__URI": f"postgresql+psycopg2://etl:{password}@127.0.0.1:{free_port()}/lake",
           "PYICEBERG_CATALOG__PROD__WAREHOUSE": (project / "wh").as_uri()}
    run = tool("doctor", "policies", cwd=project, env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.startswith("Catalog: prod (sql, postgresql+psycopg2://etl:***@127.0.0.1:")
    connection = lines(run)["connection"]
    assert connection.startswith("✗ connection: cannot list the namespaces of catalog 'prod'")
    assert "fix: check the catalog's uri" in connection
    assert_clean(run, password)


def test_unknown_catalog_lists_the_defined_ones(project: Path) -> None:
    env = catalog_env(project, (project / "wh").as_uri(), {}) | catalog_env(project, (project / "wh").as_uri(), {},
                                                                            name="DEV")
    run = tool("doctor", "policies", "--catalog", "prdo", cwd=project, env=env)
    assert run.returncode == 1
    assert "error: catalog 'prdo' (--catalog) is not defined; defined catalogs: dev, prod" in run.stderr
    assert run.stdout == "" and "Traceback" not in run.stderr


def test_environment_selects_the_catalog(project: Path) -> None:
    (project / "environments").mkdir()
    (project / "environments" / "prod.yaml").write_text("catalog: prod\n")
    env = catalog_env(project, (project / "wh").as_uri(), {}) | catalog_env(project, (project / "wh").as_uri(), {},
                                                                            name="DEV")
    run = tool("doctor", "policies", "--env", "prod", cwd=project, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("Catalog: prod (sql, sqlite:///") and "environment prod" in run.stdout.splitlines()[0]


def test_spark_master_nobody_listens_on(project: Path) -> None:
    master = f"spark://127.0.0.1:{free_port()}"
    run = tool("doctor", "policies", "--spark-master", master, cwd=project)
    assert run.returncode == 1, run.stdout + run.stderr
    line = lines(run)["spark master"]
    assert line.startswith(f"✗ spark master: --spark-master '{master}': no Spark master answers there")
    assert "fix: start it or fix the URL" in line
    assert_clean(run)


def test_malformed_spark_master(project: Path) -> None:
    run = tool("doctor", "policies", "--spark-master", "spark:/nowhere", cwd=project)
    assert run.returncode == 1
    assert lines(run)["spark master"].startswith("✗ spark master: --spark-master 'spark:/nowhere': not a Spark")


def test_missing_java_is_a_failed_check_not_a_crash(project: Path) -> None:
    run = tool("doctor", "policies", cwd=project, env={"JAVA_HOME": str(project / "no-java")})
    assert run.returncode == 1, run.stdout + run.stderr
    checks = lines(run)
    assert checks["java"].startswith("✗ java: Java was not found") and "fix: install Java 17" in checks["java"]
    assert checks["connection"].startswith("✓") and checks["pyspark"].startswith("✓")
    assert_clean(run)


def test_help() -> None:
    run = tool("doctor", "--help", cwd=ROOT)
    assert run.returncode == 0
    assert "--write-probe" in run.stdout and "--spark-master" in run.stdout and "--format" in run.stdout


def test_doctor_never_imports_pyspark(project: Path) -> None:
    """In a process where importing pyspark raises, doctor runs every check (pyspark's is read from metadata)."""
    blocker = project / "block"
    (blocker / "pyspark").mkdir(parents=True)
    (blocker / "pyspark" / "__init__.py").write_text("raise ImportError('pyspark is blocked in this test')\n")
    env = process_env(project) | {"PYTHONPATH": f"{blocker}:{ROOT}"}
    done = subprocess.run([sys.executable, "-m", "tablepolicy", "doctor", "policies"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "blocked" not in done.stdout + done.stderr


def test_an_unreachable_catalog_is_said_in_words_without_the_drivers_class(project: Path) -> None:
    env = {"PYICEBERG_CATALOG__PROD__URI": "sqlite:////nonexistent/folder/catalog.db",
           "PYICEBERG_CATALOG__PROD__WAREHOUSE": (project / "wh").as_uri()}
    run = tool("doctor", "policies", "--catalog", "prod", cwd=project, env=env)
    assert run.returncode == 1, run.stdout + run.stderr
    connection = lines(run)["connection"]
    assert connection.startswith("✗ connection: cannot list the namespaces of catalog 'prod': "), connection
    assert "— fix: check the catalog's uri" in connection
    assert not re.search(r"\w+(Error|Exception)\b|\(sqlite3\.", connection), connection
    assert_clean(run)
