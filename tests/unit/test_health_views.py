"""``health`` shows the catalog's views of the selected namespaces (version, age of the version, same as git /
differs / unmanaged) in text, JSON and HTML, and the HTML report lists each table's branches and tags (type, age,
retention, snapshots it alone keeps alive). A real SQLite SQL catalog (Iceberg's JDBC layout, schema V1): tables
written with pyiceberg, views as Spark's CREATE VIEW leaves them (a VIEW row and its metadata file). No JVM; the
moment is fixed, never the clock."""

from __future__ import annotations

import gzip
import json
import re
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField
from sqlalchemy import text

import tablepolicy
from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.maintenance.view_health import ViewsHealth, view_lines
from tablepolicy.compiler.render.health_html import TableReport, refs_of, render_health_html
from tablepolicy.compiler.render.maintenance_text import maintenance_json, render_health
from tests.cli_runner import tablepolicy as cli
from tests.memory_views import view_metadata

NOW = datetime(2026, 1, 15, tzinfo=UTC)  # the views' versions are of 2026-01-01 00:00 UTC
TABLE = """table: u.t
columns: [{name: id, type: long}]
lifecycle: {snapshots: {max_age: 1h, min_keep: 1}}
"""
SAME = "view: u.v\nsql: SELECT id FROM u.t\n"
DECLARED = "view: u.w\nsql: SELECT id FROM u.t WHERE id > 0\ndescription: positive ids\n"
HELD_W = "view: u.w\nsql: SELECT id FROM u.t\n"  # what the catalog holds as u.w: another SQL, no comment
UNMANAGED = "view: u.x\nsql: SELECT id FROM u.t\n"
ELSEWHERE = "view: other.y\nsql: SELECT id FROM u.t\n"  # a namespace git never mentions


def add_view(config: CatalogConfig, policy: str, folder: Path, *, version_id: int = 1, dialect: str = "spark"
             ) -> None:
    """The view ``policy`` declares as Spark's CREATE VIEW leaves it in a JDBC catalog (schema V1); another
    ``dialect``: as another engine leaves it."""
    metadata = view_metadata(policy, version_id=version_id)
    metadata["versions"][0]["representations"][0]["dialect"] = dialect
    namespace, name = metadata["location"].rsplit("/", 2)[-2:]
    file = folder / f"{namespace}.{name}.gz.metadata.json"
    file.write_bytes(gzip.compress(json.dumps(metadata).encode()))
    with SqlCatalog("lake", **config.properties).engine.begin() as connection:
        connection.execute(text("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                                "metadata_location, previous_metadata_location, iceberg_type) VALUES "
                                "('lake', :ns, :name, :loc, NULL, 'VIEW')"),
                           {"ns": namespace, "name": name, "loc": file.as_uri()})


@pytest.fixture
def lake(tmp_path: Path) -> tuple[Path, CatalogConfig]:
    """policies/ declaring table u.t and views u.v and u.w; the catalog holding u.t (two snapshots, tag audit on
    the first, branch wap with its own retention on the second) and views u.v (as git), u.w (other SQL), u.x
    (no policy) and other.y."""
    config = CatalogConfig("lake", {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}",
                                    "warehouse": (tmp_path / "wh").as_uri()})
    catalog = SqlCatalog("lake", **config.properties)
    catalog.create_namespace("u")
    catalog.create_namespace("other")
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    table = catalog.create_table("u.t", schema)
    for i in range(2):
        table.append(pa.table({"id": [i]}, schema=schema.as_arrow()))
    first, second = (s.snapshot_id for s in table.metadata.snapshots)
    table.manage_snapshots().create_tag(first, "audit", max_ref_age_ms=30 * 86_400_000).commit()
    table.manage_snapshots().create_branch(second, "wap", max_snapshot_age_ms=86_400_000,
                                           min_snapshots_to_keep=1).commit()
    for policy in (SAME, HELD_W, UNMANAGED, ELSEWHERE):
        add_view(config, policy, tmp_path, version_id=3 if policy == HELD_W else 1)
    policies = tmp_path / "policies" / "u"
    policies.mkdir(parents=True)
    for name, policy in (("t", TABLE), ("v", SAME), ("w", DECLARED)):
        (policies / f"{name}.yaml").write_text(policy)
    return tmp_path / "policies", config


def test_views_in_text_and_json(lake: tuple[Path, CatalogConfig]) -> None:
    policies, config = lake
    outcome = tablepolicy.health(policies, catalog=config, now=NOW)
    assert view_lines(outcome.views) == [
        "views in u:",
        "  u.v  version 1, 14d old, same as git",
        "  u.w  version 3, 14d old, differs from git: sql, comment",
        "  u.x  version 1, 14d old, unmanaged (no policy file declares view u.x)",
    ]
    assert render_health(outcome.decided, views=outcome.views).endswith("\n\n" + "\n".join(view_lines(outcome.views))
                                                                        + "\n")
    document = json.loads(maintenance_json(outcome.decided, "lake", views=outcome.views))
    stamp = 1767225600000
    version = {"version_timestamp_ms": stamp, "version_age_ms": 14 * 86_400_000, "reason": None}
    assert document["views"] == {"namespaces": [["u"]], "unread": None, "views": [
        {"view": ["u", "v"], "version_id": 1, **version, "status": "same", "differs": []},
        {"view": ["u", "w"], "version_id": 3, **version, "status": "differs", "differs": ["sql", "comment"]},
        {"view": ["u", "x"], "version_id": 1, **version, "status": "unmanaged", "differs": []},
    ]}


def test_a_selection_lists_the_views_of_its_namespaces_only(lake: tuple[Path, CatalogConfig]) -> None:
    policies, config = lake
    (policies / "other").mkdir()
    (policies / "other" / "y.yaml").write_text(ELSEWHERE)
    whole = tablepolicy.health(policies, catalog=config, now=NOW).views
    assert [(v.view, v.status) for v in whole.views] == [
        (("other", "y"), "same"), (("u", "v"), "same"), (("u", "w"), "differs"), (("u", "x"), "unmanaged")]
    one = tablepolicy.health(policies / "other", catalog=config, now=NOW).views
    assert view_lines(one) == ["views in other:", "  other.y  version 1, 14d old, same as git"]


class Rows(HTMLParser):
    """The text of each row of the table under each h2/h3 heading: {heading: [[cell, ...], ...]}."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.heading, self.in_heading = "", False
        self.row: list[str] | None = None
        self.cell: str | None = None
        self.status: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h2", "h3"):
            self.heading, self.in_heading = "", True
        elif tag == "tr":
            self.row = []
        elif tag == "td" and self.row is not None:
            self.cell = ""
            self.status += [v or "" for k, v in attrs if k == "data-status"]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h2", "h3"):
            self.in_heading = False
        elif tag == "td" and self.row is not None and self.cell is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif tag == "tr" and self.row:
            self.tables.setdefault(self.heading, []).append(self.row)
            self.row = None

    def handle_data(self, data: str) -> None:
        if self.in_heading:
            self.heading += data
        elif self.cell is not None:
            self.cell += data


def test_the_html_report_lists_refs_and_views(lake: tuple[Path, CatalogConfig]) -> None:
    policies, config = lake
    table = SqlCatalog("lake", **config.properties).load_table("u.t")
    first, second = sorted(table.metadata.snapshots, key=lambda s: s.timestamp_ms)
    # two days after the first write: its snapshot is past the 1h max_age and wap's 1d, kept by the tag alone
    now = datetime.fromtimestamp(-(-first.timestamp_ms // 1000), UTC) + timedelta(days=2)  # health keeps seconds
    outcome = tablepolicy.health(policies, catalog=config, now=now)
    [decided] = outcome.decided.tables
    page = render_health_html([TableReport(t.health, t.actions, refs_of(t)) for t in outcome.decided.tables],
                              "catalog 'lake' (sql)", NOW, outcome.views)
    rows = Rows()
    rows.feed(page)
    audit, wap = rows.tables["Branches and tags"]
    [table] = json.loads(maintenance_json(outcome.decided, "lake"))["tables"]
    assert table["refs"][0] == {"name": "audit", "kind": "tag", "snapshot_id": first.snapshot_id,
                                "age_ms": 2 * 86_400_000 + 1000 - first.timestamp_ms % 1000 if first.timestamp_ms
                                % 1000 else 2 * 86_400_000, "keeps": 1, "expires": False}
    assert audit == ["audit", "tag", str(first.snapshot_id), "2d old", "max_ref_age 30d", "1"]
    # the second write came milliseconds after the first: its age is 2d less that, to the minute
    assert re.fullmatch(r"2d|2879m", wap[3].removesuffix(" old"))
    assert wap[:3] + wap[4:] == ["wap", "branch", str(second.snapshot_id),
                                 "max_ref_age the table's, min_snapshots_to_keep 1, max_snapshot_age 1d", "0"]
    # the moment is the writes' here (the ages of views are checked at a fixed moment above)
    assert all(re.fullmatch(r"\d+[a-z]+ old", age) for _, _, age, _ in rows.tables["Views"])
    assert [[view, version, status] for view, version, _, status in rows.tables["Views"]] == [
        ["u.v", "1", "same as git"],
        ["u.w", "3", "differs from git: sql, comment"],
        ["u.x", "1", "unmanaged (no policy file declares view u.x)"],
    ]
    assert rows.status == ["same", "differs", "unmanaged"]
    assert decided.table == ("u", "t")


def test_a_view_another_engine_wrote_is_listed_as_unreadable(lake: tuple[Path, CatalogConfig], tmp_path: Path
                                                              ) -> None:
    policies, config = lake
    add_view(config, "view: u.z\nsql: SELECT id FROM u.t\n", tmp_path, dialect="trino")
    views = tablepolicy.health(policies, catalog=config, now=NOW).views
    unread = [v for v in views.views if v.view == ("u", "z")]
    assert view_lines(ViewsHealth(namespaces=views.namespaces, views=tuple(unread))) == [
        "views in u:", f"  u.z  unreadable: cannot read view u.z from {config.describe()}: its current version has "
        "no SQL for dialect 'spark' (it has: trino)"]
    assert [v.status for v in views.views] == ["same", "differs", "unmanaged", "unreadable"]
    rows = Rows()
    rows.feed(render_health_html([], "catalog 'lake'", NOW, views))
    assert rows.tables["Views"][-1][:3] == ["u.z", "–", "–"] and rows.status[-1] == "unreadable"


def test_a_table_without_refs_and_a_catalog_without_views_say_so() -> None:
    from tablepolicy.compiler.maintenance.health import TableHealth

    empty = TableHealth(table=("u", "t"), snapshot_times=(), current_snapshot_id=None, data_files=0, data_bytes=0,
                        rows=0, small_files=0, target_file_size=1, position_delete_files=0,
                        equality_delete_files=0, manifests=0, metadata_files=1)
    unread = ViewsHealth(namespaces=(("u",),), unread="tablepolicy reads views from SQL catalogs only")
    page = render_health_html([TableReport(empty, ())], "catalog 'rest'", NOW, unread)
    assert "<h3>Branches and tags</h3><p class=\"muted\">none but main</p>" in page
    assert "not read: tablepolicy reads views from SQL catalogs only" in page
    assert view_lines(unread) == ["views in u: not read (tablepolicy reads views from SQL catalogs only)"]
    assert view_lines(ViewsHealth(namespaces=(("u",),))) == ["views in u: none"]


def test_health_through_the_cli(lake: tuple[Path, CatalogConfig], tmp_path: Path) -> None:
    policies, config = lake
    env = {"PYICEBERG_CATALOG__LAKE__TYPE": "sql", "PYICEBERG_CATALOG__LAKE__URI": config.properties["uri"],
           "PYICEBERG_CATALOG__LAKE__WAREHOUSE": config.properties["warehouse"]}
    run = cli("health", str(policies), "--html", str(tmp_path / "health.html"), cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    shown = [re.sub(r"\d+[a-z]+ old", "N old", line) for line in run.stdout.splitlines()[-4:]]
    assert shown == ["views in u:", "  u.v  version 1, N old, same as git",
                     "  u.w  version 3, N old, differs from git: sql, comment",
                     "  u.x  version 1, N old, unmanaged (no policy file declares view u.x)"]
    assert "  refs          tag audit: snapshot" in run.stdout and "                branch wap: snapshot" in run.stdout
    page = (tmp_path / "health.html").read_text()
    assert '<section class="card" id="views"><h2>Views</h2>' in page and "<td>audit</td><td>tag</td>" in page
    run = cli("health", str(policies), "--format", "json", cwd=tmp_path, env=env)
    document = json.loads(run.stdout)
    assert [v["status"] for v in document["views"]["views"]] == ["same", "differs", "unmanaged"]
    [table] = document["tables"]
    assert [(r["name"], r["kind"], r["expires"]) for r in table["refs"]] == [("audit", "tag", False),
                                                                         ("wap", "branch", False)]
