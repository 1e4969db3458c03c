"""Every error class a user meets at the front door, through the real CLI (in this process, no JVM): each says
what happened, names the file, flag or setting at fault and says what to do, and none shows a Python exception
class, a decoder's internals or a traceback.

One row per error class: how to break the project (a function of the project folder), the command, what the
message must name, and the fix it must give (both literal text of the message).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from tests.catalog_fixtures import embedded_catalog
from tests.cli_runner import tablepolicy

ROOT = Path(__file__).resolve().parents[2]

# what no user-facing message may show: an exception class, a decoder's or an object model's internals
FORBIDDEN = re.compile(
    r"Traceback|\b[A-Z]\w*(Error|Exception|Invalid|Warning)\b|object has no attribute|has no attribute|"
    r"codec can't decode|Expecting (value|property name)|\(char \d+\)|KeyError|list indices|not subscriptable|"
    r"NoneType|HTTPConnectionPool|sqlalchemy\.|psycopg2\.|sqlite3\.")
# a fix is an imperative: the verbs the messages use to tell the user what to do
IMPERATIVE = re.compile(r"\b(set|plan again|wait|fix|check|remove|write|start|name|give|make|quote|regenerate|"
                        r"define|choose|unlock|save)\b")


@dataclass(frozen=True)
class Case:
    setup: Callable[[Path], None]
    args: tuple[str, ...]
    names: str  # the file, flag or setting the message must name
    fix: str  # the imperative fix it must give


def catalog_file(text: str) -> Callable[[Path], None]:
    def setup(project: Path) -> None:
        (project / ".pyiceberg.yaml").write_text(text)
    return setup


def catalog(**props: str) -> Callable[[Path], None]:
    return catalog_file("catalog:\n  prod:\n" + "".join(f"    {k}: {json.dumps(v)}\n" for k, v in props.items()))


def planned(edit: Callable[[str], str | bytes]) -> Callable[[Path], None]:
    """A plan file ``tablepolicy plan --out`` wrote, then ``edit``ed (text -> new text or bytes)."""
    def setup(project: Path) -> None:
        done = tablepolicy("plan", "policies", "--out", "plan.json", cwd=project)
        assert done.returncode == 0, done.stderr
        path = project / "plan.json"
        edited = edit(path.read_text())
        path.write_bytes(edited if isinstance(edited, bytes) else edited.encode())
    return setup


def document(change: Callable[[dict[str, object]], object]) -> Callable[[str], str]:
    """The plan file's document, changed in place by ``change``."""
    def edit(text: str) -> str:
        loaded = json.loads(text)
        change(loaded)
        return json.dumps(loaded)
    return edit


def set_key(key: str, value: object) -> Callable[[dict[str, object]], None]:
    return lambda d: d.__setitem__(key, value)


def locked(raw: Callable[[], bytes]) -> Callable[[Path], None]:
    """A saved plan; then another run (this process: alive) creates one of its tables and holds its lock."""
    def setup(project: Path) -> None:
        planned(lambda text: text)(project)
        lake = embedded_catalog(project / "policies")
        lake.create_namespace_if_not_exists("logs")
        lake.create_table("logs.app_events", Schema(NestedField(1, "x", LongType())))
        lock = project / ".lake" / "lock-logs.app_events.json"
        lock.write_bytes(raw().ljust(1024))
        now = time.time()  # written a moment ago by the process's clock (the kernel's stamp may be another clock's)
        os.utime(lock, (now, now))
    return setup


def holder() -> bytes:
    now = time.time()
    return json.dumps({"table": "logs.app_events", "host": socket.gethostname(), "pid": os.getpid(),
                       "command": "tablepolicy apply", "since": now - 60, "heartbeat": now, "interval": 15.0,
                       "token": "0123456789abcdef", "session": None}).encode()


def environment(text: str | bytes) -> Callable[[Path], None]:
    def setup(project: Path) -> None:
        (project / "environments").mkdir(exist_ok=True)
        path = project / "environments" / "dev.yaml"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return setup


def requests(name: str, text: str) -> Callable[[Path], None]:
    return lambda project: (project / name).write_text(text)


PLAN = ("plan", "policies", "--catalog", "prod")
APPLY = ("apply", "plan.json")
SET_URI = "PYICEBERG_CATALOG__PROD__URI"
REGENERATE = "tablepolicy plan POLICIES --out plan.json"

CASES = {
    # catalog configuration: which setting to change
    "catalog-unknown-type": Case(catalog(type="nosuch", uri="sqlite:///x.db"), PLAN, "PYICEBERG_CATALOG__PROD__TYPE",
                                 "set 'type'"),
    "catalog-uri-no-catalog-kind": Case(catalog(uri="mysql://localhost/lake", warehouse="file:///tmp/w"), PLAN,
                                        SET_URI, "set 'uri'"),
    "catalog-uri-wrong-driver": Case(catalog(uri="sqlite+nodriver:///x.db", warehouse="file:///tmp/w"), PLAN, SET_URI,
                                     "set 'uri'"),
    "catalog-uri-malformed": Case(catalog(type="sql", uri="sqlite//x.db", warehouse="file:///tmp/w"), PLAN, SET_URI,
                                  "set 'uri'"),
    "catalog-sqlite-unreachable": Case(catalog(uri="sqlite:////nonexistent/folder/catalog.db",
                                               warehouse="file:///tmp/w"), PLAN, SET_URI, "check that it runs"),
    "catalog-rest-unreachable": Case(catalog(uri="http://127.0.0.1:1/"), PLAN, SET_URI, "check that it runs"),
    "catalog-postgresql-unreachable": Case(catalog(uri="postgresql+psycopg2://etl:s3cret@127.0.0.1:1/lake",
                                                   warehouse="file:///tmp/w"), PLAN, SET_URI, "check that it runs"),
    "catalog-missing-warehouse": Case(catalog(type="sql", uri="sqlite:///catalog.db"),
                                      ("apply", "policies", "--catalog", "prod", "--auto-approve"),
                                      "PYICEBERG_CATALOG__PROD__WAREHOUSE", "set 'warehouse'"),
    "catalog-undefined-name": Case(catalog(uri="sqlite:///x.db"), ("plan", "policies", "--catalog", "nope"),
                                   "--catalog", "defined catalogs: prod"),
    "catalog-file-a-list": Case(catalog_file("- prod\n- dev\n"), PLAN, ".pyiceberg.yaml", "fix it"),
    "catalog-file-catalog-a-list": Case(catalog_file("catalog:\n  - prod\n"), PLAN, ".pyiceberg.yaml", "fix it"),
    "catalog-file-not-yaml": Case(catalog_file("catalog:\n  prod: {uri: [\n"), PLAN, ".pyiceberg.yaml:", "fix it"),
    # plan files: what to regenerate and how
    "plan-empty": Case(planned(lambda _: ""), APPLY, "plan.json", REGENERATE),
    "plan-truncated": Case(planned(lambda text: text[:len(text) // 2]), APPLY, "plan.json", REGENERATE),
    "plan-not-json": Case(planned(lambda _: "tables:\n  - logs.app_events\n"), APPLY, "plan.json", REGENERATE),
    "plan-not-utf8": Case(planned(lambda _: b"\xff\xfe{}"), APPLY, "plan.json", REGENERATE),
    "plan-an-array": Case(planned(lambda _: "[1, 2]"), APPLY, "plan.json", REGENERATE),
    "plan-no-format": Case(planned(document(lambda d: d.pop("format_version"))), APPLY, "plan.json", REGENERATE),
    "plan-older-format": Case(planned(document(set_key("format_version", 2))), APPLY, "plan.json", REGENERATE),
    "plan-newer-format": Case(planned(document(set_key("format_version", 99))), APPLY, "plan.json", REGENERATE),
    "plan-missing-tables": Case(planned(document(lambda d: d.pop("tables"))), APPLY, "'tables'", REGENERATE),
    "plan-tables-wrong-type": Case(planned(document(set_key("tables", {"a": 1}))), APPLY, "'tables'", REGENERATE),
    "plan-change-wrong-type": Case(planned(document(lambda d: d["tables"][0].__setitem__("changes", [[1]]))),  # type: ignore[index]
                                   APPLY, "tables[0].changes[0]", REGENERATE),
    "plan-unknown-action": Case(planned(document(
        lambda d: d["tables"][0]["changes"][0]["change"].__setitem__("action", "rm_rf"))),  # type: ignore[index]
        APPLY, "tables.0.changes.0", REGENERATE),
    "journal-not-an-entry": Case(lambda project: (planned(lambda text: text)(project),
                                                  (project / "plan.json.journal").write_text("[1, 2]\n")),
                                 APPLY, "plan.json.journal:1", "remove that line"),
    # a table locked by another run: who, since when, how to wait or take over
    "lock-held-by-another-run": Case(locked(holder), APPLY, f"pid {os.getpid()} on {socket.gethostname()}",
                                     "tablepolicy unlock logs.app_events"),
    "lock-file-unreadable": Case(locked(lambda: b"garbage"), APPLY, "an unreadable lock file",
                                 "tablepolicy unlock logs.app_events"),
    # environment overlays and erasure requests of the wrong shape
    "environment-tables-wrong-type": Case(environment("tables: 3\n"), ("plan", "policies", "--env", "dev"),
                                          "environments/dev.yaml", "write a mapping"),
    "requests-yaml-a-list": Case(requests("req.yaml", "- 1\n- 2\n"),
                                 ("erase", "policies", "--requests", "req.yaml", "--dry-run"), "req.yaml",
                                 "start the file with 'requests:'"),
    "requests-missing": Case(lambda project: None, ("erase", "policies", "--requests", "gone.yaml", "--dry-run"),
                             "--requests gone.yaml", "give the path"),
    "requests-not-utf8": Case(lambda project: (project / "req.yaml").write_bytes(b"\xff\xfe"),
                              ("erase", "policies", "--requests", "req.yaml", "--dry-run"), "--requests req.yaml",
                              "save it as UTF-8"),
    "requests-wrong-extension": Case(requests("req.json", "[]\n"),
                                     ("erase", "policies", "--requests", "req.json", "--dry-run"), "req.json",
                                     "name the file"),
    # overlay and request files
    "requests-jsonl-an-array": Case(requests("req.jsonl", "[1]\n"),
                                    ("erase", "policies", "--requests", "req.jsonl", "--dry-run"), "req.jsonl",
                                    "write one JSON object per line"),
    "environment-a-list": Case(environment("- a\n- b\n"), ("plan", "policies", "--env", "dev"),
                               "environments/dev.yaml", "write a mapping"),
    "environment-not-utf8": Case(environment(b"\xff\xfe\n"), ("plan", "policies", "--env", "dev"),
                                 "environments/dev.yaml", "save the file as UTF-8"),
    "requests-jsonl-not-json": Case(requests("req.jsonl", "{not json\n"),
                                    ("erase", "policies", "--requests", "req.jsonl", "--dry-run"), "req.jsonl",
                                    "write one JSON object per line"),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    return tmp_path


def check(case: Case, project: Path) -> None:
    case.setup(project)
    run = tablepolicy(*case.args, cwd=project)
    errors = [line for line in run.stdout.splitlines() + run.stderr.splitlines() if " error" in f" {line}"]
    assert run.returncode == 1, run
    assert errors, run
    message = "\n".join(errors)
    everything = run.stdout + run.stderr
    assert case.names in everything, message
    assert case.fix in everything, message
    assert IMPERATIVE.search(everything), message
    assert not FORBIDDEN.search(everything), FORBIDDEN.search(everything)
    assert "s3cret" not in everything


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_error_names_what_to_change_and_how(project: Path, name: str) -> None:
    check(CASES[name], project)


def test_a_table_locked_by_another_run_is_never_called_a_stale_plan(project: Path) -> None:
    """The other run has already created a table of the saved plan: its lock is what stops this apply."""
    locked(holder)(project)
    run = tablepolicy(*APPLY, cwd=project)
    assert run.returncode == 1
    assert "is being applied by" in run.stderr
    assert "stale" not in run.stderr and "policies give" not in run.stderr
