"""What a run keeps in memory at fleet scale changes nothing it reports (issue 22): the catalog reader keeps each
table's metadata file, not its state; a loaded policy reads its file again for positions; forked work streams back
in order; the model cache is written only when it gained an entry; policy files are found as Path.rglob finds them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

import tablepolicy.runtime.catalog.reader as reader_module
from tablepolicy.compiler import yamlsource
from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.errors import TablePolicyError
from tablepolicy.compiler.loader import POLICY_SUFFIXES, discover
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.caches.models import FileModelCache
from tablepolicy.runtime.catalog.reader import CatalogReader
from tablepolicy.runtime.forked import forked_map, workers_for

ROOT = Path(__file__).resolve().parents[2]
NAME = ("sales", "orders")


@pytest.fixture
def catalog(tmp_path: Path) -> tuple[SqlCatalog, CatalogConfig]:
    props = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}", "warehouse": tmp_path.as_uri()}
    sql = SqlCatalog("lake", uri=props["uri"], warehouse=props["warehouse"])
    sql.create_namespace("sales")
    sql.create_table(NAME, Schema(NestedField(1, "id", LongType(), required=True)), properties={"owner": "a"})
    return sql, CatalogConfig("lake", props)


@pytest.mark.parametrize("listing", [True, False], ids=["sql listing", "load_table"])
def test_a_table_reads_as_first_read_until_fresh(catalog: tuple[SqlCatalog, CatalogConfig], listing: bool,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A commit after the first read changes nothing this run reads, even once the state is no longer kept."""
    sql, config = catalog
    monkeypatch.setattr(reader_module, "RECENT_TABLES", 0)  # no state kept: every call reads the file again
    with CatalogReader(config) as reader:
        if not listing:
            reader.metadata_locations = lambda: None  # type: ignore[method-assign]
        first = reader.table(NAME)
        assert first is not None
        with sql.load_table(NAME).transaction() as commit:
            commit.set_properties(owner="b")
        again = reader.table(NAME)
        table = reader.pyiceberg_table(NAME)
        fresh = reader.table(NAME, fresh=True)
    assert again == first and again is not first
    assert table is not None and table.metadata_location == first.metadata_location
    assert table.properties["owner"] == "a"
    assert fresh is not None and fresh.state.properties["owner"] == "b"
    assert fresh.metadata_location != first.metadata_location


def test_a_missing_table_reads_as_none(catalog: tuple[SqlCatalog, CatalogConfig]) -> None:
    with CatalogReader(catalog[1]) as reader:
        assert reader.table(("sales", "missing")) is None
        assert reader.pyiceberg_table(("sales", "missing")) is None


def test_positions_read_the_file_again_and_refuse_an_edited_one(tmp_path: Path) -> None:
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    project, _ = validate(policies)
    table = next(t for t in project.tables if t.name == ("ads", "click_log"))
    assert table.source.text is None and table.source.root is None
    assert table.source.value(("columns", 5)).line == 14
    file = Path(table.source.file)
    file.write_text(file.read_text() + "\n# edited\n")
    yamlsource._TREES.clear()  # the trees of the last files asked are kept: as once many others were asked
    with pytest.raises(TablePolicyError, match=f"{file} changed while tablepolicy was reading the policies; run"):
        table.source.value(("columns", 5))


@pytest.mark.skipif(workers_for(1000, 1) == 0, reason="needs fork and two cores")
def test_forked_work_comes_back_in_order() -> None:
    items = list(range(237))  # several chunks, the last one short
    assert forked_map(lambda n: n * n, items, 2) == [n * n for n in items]


def test_the_model_cache_is_written_only_when_it_gained_an_entry(tmp_path: Path) -> None:
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    cache_file = tmp_path / "models.tsv"
    validate(policies, FileModelCache.open(cache_file))
    cache_file.write_text(cache_file.read_text() + "\n")  # still the same entries; a rewrite drops the blank line
    validate(policies, FileModelCache.open(cache_file))
    assert cache_file.read_text().endswith("\n\n")
    (policies / "new.yaml").write_text("table: shop.extra\ncolumns: [{name: id, type: long}]\n")
    validate(policies, FileModelCache.open(cache_file))
    assert not cache_file.read_text().endswith("\n\n")
    assert len(FileModelCache.open(cache_file).models) == 7


def test_policy_files_are_found_as_rglob_finds_them(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "elsewhere.yaml").write_text("x")
    root = tmp_path / "policies"
    for name in ["a/x.yaml", "a/.hidden/y.YML", "b.x/z.yaml", "b/z.yaml", "b/w.json", "top.yml", "c.Yaml", "ab/q.yaml",
                 "a-b/r.yaml", "sp ace/s.yaml", ".yaml", "t.yaml."]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    os.symlink(outside, root / "linked")  # a symlinked folder is not entered
    os.symlink(root / "a" / "x.yaml", root / "file_link.yaml")  # a symlink to a file counts
    os.symlink(tmp_path / "nothing", root / "broken.yaml")
    expected = sorted(p for p in root.rglob("*") if p.suffix.lower() in POLICY_SUFFIXES and p.is_file())
    assert discover(root) == expected
    assert [p.relative_to(root).as_posix() for p in expected] == [
        "a/.hidden/y.YML", "a/x.yaml", "a-b/r.yaml", "ab/q.yaml", "b/z.yaml", "b.x/z.yaml", "c.Yaml", "file_link.yaml",
        "sp ace/s.yaml", "top.yml"]


def test_a_large_project_validated_without_workers_keeps_no_model_built(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """One core, another thread alive, no fork: the files are prepared one after the other as workers would, each
    model kept as its JSON (a plan of 10,000 tables held 1.5 GB of built models), with the same findings."""
    import tablepolicy.compiler.validate as validation

    policies = tmp_path / "policies"
    template = (ROOT / "policies" / "ads" / "click_log.yaml").read_text()
    for i in range(validation.PARALLEL_FROM):
        folder = policies / f"ns_{i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        text = template.replace("table: ads.click_log", f"table: ns_{i % 4}.t_{i}")
        if i == 7:  # one table with a warning, to compare findings
            text = ("table: shop.orders\ncolumns: [{name: id, type: long}]\n"
                    "lifecycle:\n  orphan_files: {older_than: 2d}\n")
        (folder / f"t_{i}.yaml").write_text(text)
    prepared, prepared_findings = validate(policies)
    assert len(prepared.tables) == validation.PARALLEL_FROM
    assert all(t.model is None for t in prepared.tables)
    monkeypatch.setattr(validation, "PARALLEL_FROM", 10**9)  # the small project's way: every model built and kept
    kept, kept_findings = validate(policies)
    assert all(t.model is not None for t in kept.tables)
    assert [d.render() for d in prepared_findings] == [d.render() for d in kept_findings]
    assert [d.code for d in prepared_findings] == ["TP422"]
    assert [t.policy for t in prepared.tables] == [t.policy for t in kept.tables]
