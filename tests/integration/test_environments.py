"""Environment overlays on real Spark: ``apply --env prod`` writes prod's values into the catalog's table
properties, the plan for that environment is then empty while the base policies and another environment
still differ, and a saved plan applies with the environment it records (checked against that overlay)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tablepolicy.compiler.catalog.config import CatalogConfig
from tests.integration.conftest import Lake

pytestmark = pytest.mark.spark

TABLE = """
table: envs.events
owner: app-team
columns:
  - {name: id, type: long, required: true}
  - {name: ts, type: timestamptz}
partition_by: [day(ts)]
properties: {write.parquet.compression-codec: snappy}
lifecycle:
  snapshots: {max_age: 1d, min_keep: 2}
  compaction: {target_file_size: 128MB}
  retention: {column: ts, keep: 30d}
"""
PROD = """
catalog: lake
defaults:
  owner: data-platform
tables:
  envs.events:
    properties: {write.parquet.compression-codec: zstd}
    lifecycle:
      snapshots: {max_age: 7d}
      compaction: {target_file_size: 512MB}
      retention: {keep: 365d}
"""
DEV = """
catalog: lake
namespaces:
  envs: {lifecycle: {snapshots: {max_age: 6h}}}
"""
# what prod's overlay makes of the table's properties (min_keep stays the table file's)
PROD_PROPERTIES = {
    "history.expire.max-snapshot-age-ms": str(7 * 86_400_000),
    "history.expire.min-snapshots-to-keep": "2",
    "write.target-file-size-bytes": str(512 * 1024 * 1024),
    "write.parquet.compression-codec": "zstd",
    "tablepolicy.retention.keep": "365d",
    "tablepolicy.owner": "data-platform",
}


def env_for(config: CatalogConfig) -> dict[str, str]:
    return {f"PYICEBERG_CATALOG__{config.name.upper()}__{key.upper()}": value
            for key, value in config.properties.items()} | {"TABLEPOLICY_ENV": "", "TABLEPOLICY_CATALOG": ""}


def test_apply_env_prod_writes_the_prod_values(lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policies/envs").mkdir(parents=True)
    (tmp_path / "policies/envs/events.yaml").write_text(TABLE)
    (tmp_path / "environments").mkdir()
    (tmp_path / "environments/prod.yaml").write_text(PROD)
    (tmp_path / "environments/dev.yaml").write_text(DEV)
    runner = CliRunner(env=env_for(lake.config))

    def cli(*args: str) -> tuple[int, str]:
        result = runner.invoke(app, list(args))
        return result.exit_code, result.output

    code, output = cli("apply", "policies", "--env", "prod", "--auto-approve")
    assert code == 0, output
    assert output.splitlines()[0].endswith(" · environment prod (environments/prod.yaml)")
    assert "lifecycle.snapshots.max_age = 7d  from environments/prod.yaml:9:28  (envs.events)" in output, output
    with lake.reader() as reader:
        current = reader.table(("envs", "events"))
        assert current is not None
        properties = current.state.properties
    assert {key: properties.get(key) for key in PROD_PROPERTIES} == PROD_PROPERTIES

    assert cli("plan", "policies", "--env", "prod", "--detailed-exitcode")[0] == 0  # prod's values are in place
    # the base policies are never planned against a catalog an environment is bound to: both name it
    code, output = cli("plan", "policies", "--detailed-exitcode")
    assert code == 1 and "catalog 'lake' is the catalog of environment 'dev' (environments/dev.yaml:2:10), " \
        "'prod' (environments/prod.yaml:2:10), and no environment is selected" in output, output
    assert "pass --env dev or --env prod" in output
    # another environment differs in its values; its shorter snapshot age is blocked like any other
    code, output = cli("plan", "policies", "--env", "dev", "--detailed-exitcode")
    assert code == 3 and "history.expire.max-snapshot-age-ms: from environments/dev.yaml:4:43" in output, output

    # a reviewed plan of a changed overlay applies with the environment it records, checked against that overlay
    overlay = tmp_path / "environments/prod.yaml"
    overlay.write_text(PROD.replace("max_age: 7d", "max_age: 3d"))
    code, output = cli("plan", "policies", "--env", "prod", "--out", "plan.json")
    assert code == 0, output
    code, output = cli("apply", "plan.json")
    assert code == 0, output
    with lake.reader() as reader:
        current = reader.table(("envs", "events"))
        assert current is not None
        assert current.state.properties["history.expire.max-snapshot-age-ms"] == str(3 * 86_400_000)
