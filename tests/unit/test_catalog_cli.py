"""Catalog targeting and credentials through the CLI, as a user types it (run in this process): a catalog name
no configuration defines is refused before anything is created, every output names its catalog, and no
secret reaches the screen (or a log) however the URI is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tablepolicy.compiler.desired import desired_states
from tablepolicy.compiler.validate import validate
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.cli_runner import tablepolicy as tool  # no catalog configuration but what the test gives

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the example project (tables not created: nothing needs a catalog to exist)."""
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    return tmp_path


def prod(tmp_path: Path, name: str = "PROD") -> dict[str, str]:
    return {f"PYICEBERG_CATALOG__{name}__URI": f"sqlite:///{tmp_path / (name.lower() + '.db')}",
            f"PYICEBERG_CATALOG__{name}__WAREHOUSE": (tmp_path / "wh").as_uri()}


# (argv after "plan policies", environment, exit code, a line the output holds); nothing configured unless given
TARGETING = [
    pytest.param(["-c", "prdo"], {}, 1, "error: catalog 'prdo' (--catalog) is not defined: no catalog is configured, "
                 "only the embedded catalog 'lake' exists", id="typo-unconfigured"),
    pytest.param([], {"TABLEPOLICY_CATALOG": "prdo"}, 1, "error: catalog 'prdo' (TABLEPOLICY_CATALOG) is not defined",
                 id="typo-env-unconfigured"),
    pytest.param(["-c", "prdo"], "prod", 1, "error: catalog 'prdo' (--catalog) is not defined; defined catalogs: prod",
                 id="typo-configured"),
    pytest.param(["-c", "lake"], "prod", 1, "error: catalog 'lake' (--catalog) is not defined; defined catalogs: prod",
                 id="embedded-name-when-configured"),
    pytest.param([], "prod+dev", 1, "error: several catalogs are defined and none is selected; choose one with "
                 "--catalog or TABLEPOLICY_CATALOG: dev, prod", id="ambiguous"),
    pytest.param([], "prod", 0, "Catalog: prod (sql, sqlite:///", id="the-only-one"),
    pytest.param(["-c", "PROD"], "prod+dev", 0, "Catalog: prod (sql, sqlite:///", id="case-insensitive"),
    pytest.param([], "prod+default", 0, "Catalog: default (sql, sqlite:///", id="pyiceberg-default"),
    pytest.param([], {"TABLEPOLICY_CATALOG": "dev"}, 0, "Catalog: dev (sql, sqlite:///", id="env-selects"),
    pytest.param(["-c", "lake"], {}, 0, "Catalog: lake (sql, sqlite:///", id="embedded-by-name"),
    pytest.param([], {}, 0, "Catalog: lake (sql, sqlite:///", id="embedded-default"),
]


@pytest.mark.parametrize(("argv", "configured", "code", "line"), TARGETING)
def test_catalog_targeting(project: Path, argv: list[str], configured: str | dict[str, str], code: int,
                           line: str) -> None:
    env = configured if isinstance(configured, dict) else {}
    if isinstance(configured, str):
        for name in configured.split("+"):
            env |= prod(project, name.upper())
    if "TABLEPOLICY_CATALOG" in env:
        env |= prod(project, "DEV") | prod(project, "PROD")
    result = tool("plan", "policies", *argv, cwd=project, env=env)
    assert result.returncode == code, result.stdout + result.stderr
    assert line in (result.stdout + result.stderr)
    assert "Traceback" not in result.stderr
    assert not (project / ".lake").exists()  # plan reads: the embedded catalog is made by the first write


@pytest.mark.parametrize("command", [
    ["plan", "policies"], ["apply", "policies", "--auto-approve"], ["maintain", "policies"], ["health", "policies"],
    ["drift", "policies"], ["ddl", "policies"], ["import", "ads.click_log"],
    ["erase", "policies", "--requests", "requests.yaml"],
])
def test_every_command_refuses_an_undefined_catalog_and_creates_nothing(project: Path, command: list[str]) -> None:
    (project / "requests.yaml").write_text("requests:\n  - {id: R1, received: '2026-11-02', keys: {user_id: u1}}\n")
    result = tool(*command, "-c", "prdo", cwd=project)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "error: catalog 'prdo' (--catalog) is not defined" in result.stderr
    assert not (project / ".lake").exists() and "Traceback" not in result.stderr


@pytest.fixture
def created(project: Path) -> Path:
    """The example tables in the embedded catalog, exactly as declared."""
    catalog = embedded_catalog(project / "policies")
    for state in desired_states(validate(project / "policies")[0]):
        create_like(catalog, state)
    (project / "requests.yaml").write_text("requests:\n  - {id: R1, received: '2026-11-02', keys: {user_id: u1}}\n")
    return project


@pytest.mark.parametrize("command", [
    ["plan", "policies"], ["plan", "policies", "--format", "markdown"], ["apply", "policies", "--dry-run"],
    ["maintain", "policies", "--dry-run"], ["health", "policies"], ["drift", "policies"],
    ["erase", "policies", "--requests", "requests.yaml", "--dry-run"],
], ids=lambda c: " ".join(c))
def test_every_output_starts_with_the_catalog(created: Path, command: list[str]) -> None:
    result = tool(*command, cwd=created)
    assert result.returncode == 0, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    expected = f"Catalog: lake (sql, sqlite:///{created / '.lake' / 'catalog.db'})"
    assert first in (expected, f"### tablepolicy plan · {expected}")


def test_json_outputs_record_the_catalog_first(created: Path) -> None:
    health = json.loads(tool("health", "policies", "--format", "json", cwd=created).stdout)
    assert next(iter(health)) == "catalog"
    assert health["catalog"] == {"name": "lake", "type": "sql", "uri": f"sqlite:///{created / '.lake' / 'catalog.db'}"}
    planned = tool("plan", "policies", "--format", "json", cwd=created)
    assert planned.stderr.startswith("Catalog: lake (sql, ")  # stdout is the plan file


def test_malformed_pyiceberg_yaml_is_one_line_naming_the_file(project: Path) -> None:
    (project / ".pyiceberg.yaml").write_text("catalog:\n  prod:\n    uri: [unclosed\n")
    result = tool("plan", "policies", cwd=project)
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: cannot read the catalog configuration in {project / '.pyiceberg.yaml'}:3:11: ")
    assert not (project / ".lake").exists()


URIS = [
    "postgresql+psycopg2://etl:s3cr3t@127.0.0.1:1/lake",
    "postgresql+psycopg2://:s3cr3t@127.0.0.1:1/lake",
    "postgresql+psycopg2://etl:s3@cr3t@127.0.0.1:1/lake",
    "postgresql+psycopg2://etl@127.0.0.1:1/lake?password=s3cr3t",
    "postgresql+psycopg2://etl:s3cr3t@127.0.0.1:notaport/lake",
    "postgresql+psycopg2://etl:s3cr3t@[::1/lake",
]


@pytest.mark.parametrize("uri", URIS)
@pytest.mark.parametrize("command", [["plan", "policies"], ["drift", "policies"], ["health", "policies"],
                                     ["maintain", "policies"], ["import", "ads.click_log"],
                                     ["apply", "policies", "--auto-approve"],
                                     ["erase", "policies", "--requests", "requests.yaml"]], ids=lambda c: c[0])
def test_no_output_shows_a_password(project: Path, uri: str, command: list[str], caplog: pytest.LogCaptureFixture,
                                    recwarn: pytest.WarningsRecorder) -> None:
    (project / "requests.yaml").write_text("requests:\n  - {id: R1, received: '2026-11-02', keys: {user_id: u1}}\n")
    result = tool(*command, "-c", "prod", cwd=project, env={"PYICEBERG_CATALOG__PROD__URI": uri})
    # and what a library logs or warns, which reaches stderr when the CLI runs alone
    output = result.stdout + result.stderr + caplog.text + "".join(str(w.message) for w in recwarn)
    assert result.returncode == 1, output
    assert "s3cr3t" not in output and "cr3t" not in output, output
    assert "Traceback" not in output and "catalog 'prod'" in output
