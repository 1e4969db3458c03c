"""docs/tutorial.md, run as written: its fenced console/sh blocks are the commands, run in order in an empty folder
with the installed ``tablepolicy`` (the embedded catalog); a block after ``<!-- file: PATH -->`` is written to PATH
at that point. Each command's exit code and one outcome are checked here, keyed by the command's text, so an edit
of the tutorial that this table does not follow fails the fast test below."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from pyiceberg.catalog.sql import SqlCatalog

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Command:
    text: str


@dataclass(frozen=True)
class WriteFile:
    path: str
    content: str


Step = Command | WriteFile

_FENCE = re.compile(r"^```(\w*)\s*$")
_MARKER = re.compile(r"^<!-- file: (\S+) -->$")


def tutorial_steps(markdown: str) -> list[Step]:
    """The commands of ```console blocks (lines after ``$ ``) and ```sh blocks (every line but comments), and the
    files to write, in document order."""
    steps: list[Step] = []
    lines = markdown.splitlines()
    i, target = 0, None
    while i < len(lines):
        if marker := _MARKER.match(lines[i]):
            target = marker.group(1)
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        end = lines.index("```", i + 1)
        body, kind = lines[i + 1:end], fence.group(1)
        if target is not None:
            steps.append(WriteFile(target, "\n".join(body) + "\n"))
            target = None
        elif kind == "console":
            steps += [Command(line[2:].strip()) for line in body if line.startswith("$ ")]
        elif kind == "sh":
            steps += [Command(line.strip()) for line in body if line.strip() and not line.lstrip().startswith("#")]
        i = end + 1
    return steps


@dataclass(frozen=True)
class Ran:
    cwd: Path
    code: int
    output: str  # stdout then stderr


Check = Callable[[Ran], None]


def shows(*texts: str) -> Check:
    def check(ran: Ran) -> None:
        for text in texts:
            assert text in ran.output, f"{text!r} not in:\n{ran.output}"
    return check


def files(*paths: str) -> Check:
    def check(ran: Ran) -> None:
        for path in paths:
            assert (ran.cwd / path).is_file(), path
    return check


def catalog(cwd: Path) -> SqlCatalog:
    lake = cwd / ".lake"
    return SqlCatalog("lake", uri=f"sqlite:///{lake}/catalog.db", warehouse=(lake / "warehouse").as_uri())


def column_applied(ran: Ran) -> None:
    assert "country" in [f.name for f in catalog(ran.cwd).load_table("analytics.page_views").schema().fields]


def rows_loaded(ran: Ran) -> None:
    assert catalog(ran.cwd).load_table("analytics.page_views").scan().to_arrow().num_rows == 15


def expired_rows_gone(ran: Ran) -> None:
    """load_rows.py's rows of today and yesterday stay, its 500-day-old ones are gone: judged from the rows
    themselves, not from this machine's clock."""
    times = catalog(ran.cwd).load_table("analytics.page_views").scan().to_arrow().column("viewed_at").to_pylist()
    assert len(times) == 10 and max(times) - min(times) < timedelta(days=2)


def plan_sets_only_owners(ran: Ran) -> None:
    """One change per imported table, the owner the namespace defaults add: the import matched the catalog."""
    changes = [line.strip() for line in ran.output.splitlines() if re.match(r"  [+~!-] ", line)]
    assert len(changes) == 2 and all("tablepolicy.owner" in c and "sales-eng" in c for c in changes), ran.output
    assert "table sales.customers" in ran.output and "table sales.orders" in ran.output


def erasure_proven(ran: Ran) -> None:
    proof = json.loads((ran.cwd / "proof.json").read_text())
    assert "REQ-0001" in json.dumps(proof)
    assert [t["table"] for t in proof["tables"]] == ["analytics.page_views"]
    assert all(t["complete"] is True for t in proof["tables"])
    users = catalog(ran.cwd).load_table("analytics.page_views").scan().to_arrow().column("user_id").to_pylist()
    assert "u0" not in users and "u1" in users  # portal.py's subject: the first user id of load_rows.py's rows
    requests = catalog(ran.cwd).load_table("privacy.erasure_requests")
    [row] = requests.scan().to_arrow().to_pylist()
    assert row["keys"] == [] and row["status"] == "done" and row["fingerprint"]  # the request table erased too
    assert len(requests.metadata.snapshots) == 1


def imported(ran: Ran) -> None:
    for name in ("customers", "orders"):
        text = (ran.cwd / "policies" / "sales" / f"{name}.yaml").read_text()
        assert text.startswith("# yaml-language-server: $schema=../../policy.schema.json\n")
    assert "{field: month(ordered_at), name: ordered_month}" in (ran.cwd / "policies/sales/orders.yaml").read_text()
    assert "error TG101: table sales.orders has no owner" in ran.output  # what the next step fixes


def published(ran: Ran) -> None:
    """main moved to the audited head: it reads the batch, and the branch points where main does."""
    table = catalog(ran.cwd).load_table("analytics.page_views")
    assert "published: main is at the audited snapshot" in ran.output
    assert {"w0", "w1", "w2"} <= set(table.scan().to_arrow().column("user_id").to_pylist())
    assert table.metadata.refs["audit"].snapshot_id == table.metadata.current_snapshot_id


# command (as the tutorial writes it) -> exit code and what must hold after it
EXPECTED: list[tuple[str, int, Check]] = [
    ("tablepolicy init my-lake", 0, files("my-lake/policies/analytics/page_views.yaml", "my-lake/policy.schema.json",
                                         "my-lake/.github/workflows/tablepolicy-plan.yml")),
    ("cd my-lake", 0, files("policies/_rules.yaml")),
    ("tablepolicy validate", 0, shows("0 error(s)")),
    ("tablepolicy fmt --check", 0, shows()),
    ("tablepolicy plan", 0, shows("+ create table analytics.page_views")),
    ("tablepolicy plan --format markdown", 0, shows("`analytics.page_views`", "<details>", "CREATE TABLE")),
    ("tablepolicy plan --out plan.json", 0, files("plan.json")),
    ("tablepolicy apply plan.json", 0, shows("Apply complete")),
    ("tablepolicy plan --detailed-exitcode", 0, shows("No changes.")),
    ("tablepolicy plan --detailed-exitcode", 2, shows("+ add column country string")),
    ("tablepolicy plan --out plan.json", 0, shows("+ add column country string")),
    ("tablepolicy apply plan.json", 0, column_applied),
    ("python load_rows.py", 0, rows_loaded),
    ("tablepolicy drift", 0, shows("No drift")),
    ("tablepolicy health", 0, shows("analytics.page_views")),
    ("tablepolicy maintain --dry-run", 0, shows("DELETE FROM", "viewed_at")),
    ("tablepolicy maintain", 0, expired_rows_gone),
    ("python another_team.py", 0, shows()),
    ("tablepolicy import 'sales.*' --out policies/", 0, imported),
    ("tablepolicy validate", 0, shows("0 error(s)")),
    ("tablepolicy plan", 0, plan_sets_only_owners),
    ("python portal.py", 0, shows()),
    ("tablepolicy erase --requests-table privacy.erasure_requests --proof proof.json", 0, erasure_proven),
    ("tablepolicy erase status", 0, shows("REQ-0001  done")),
    ("tablepolicy plan --out plan.json", 0, shows("+ create branch audit")),
    ("tablepolicy apply plan.json", 0, shows("Apply complete")),
    ("python wap_write.py", 0, shows("3 rows written to branch audit; main still reads")),
    ("python wap_publish.py", 0, published),
    ("tablepolicy plan --detailed-exitcode", 0, shows("No changes.")),
]

FILES = ["policies/analytics/page_views.yaml", "load_rows.py", "another_team.py", "policies/sales/_namespace.yaml",
         "portal.py", "policies/analytics/page_views.yaml", "wap_write.py", "wap_publish.py"]


def test_the_tutorial_and_this_table_name_the_same_commands() -> None:
    steps = tutorial_steps(TUTORIAL.read_text(encoding="utf-8"))
    assert [s.text for s in steps if isinstance(s, Command)] == [command for command, _, _ in EXPECTED]
    assert [s.path for s in steps if isinstance(s, WriteFile)] == FILES


def test_the_edited_table_differs_from_the_scaffold_by_one_column() -> None:
    from tablepolicy.runtime.scaffold import EXAMPLE_TABLE

    [edited, branched] = [s for s in tutorial_steps(TUTORIAL.read_text(encoding="utf-8"))
                          if isinstance(s, WriteFile) and s.path.endswith("page_views.yaml")]
    added = set(edited.content.splitlines()) - set(EXAMPLE_TABLE.splitlines())
    assert added == {"# yaml-language-server: $schema=../../policy.schema.json",
                     "  - {name: country, type: string, doc: ISO 3166 code}"}
    assert branched.content.startswith(edited.content)  # step 9 adds the audit branch and nothing else
    assert branched.content.removeprefix(edited.content).startswith("refs:\n  - branch: audit")


@pytest.mark.spark
def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYICEBERG_", "TABLEPOLICY_"))}
    # no TABLEPOLICY_INSTALL: init writes what CI installs (this checkout's wheel when no pushed source is known)
    env |= {"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "HOME": str(tmp_path), "NO_COLOR": "1"}
    cwd = tmp_path
    expected = iter(EXPECTED)
    for step in tutorial_steps(TUTORIAL.read_text(encoding="utf-8")):
        if isinstance(step, WriteFile):
            (cwd / step.path).parent.mkdir(parents=True, exist_ok=True)
            (cwd / step.path).write_text(step.content, encoding="utf-8")
            continue
        command, code, check = next(expected)
        assert step.text == command
        if command.startswith("cd "):
            cwd = cwd / command.removeprefix("cd ")
            ran = Ran(cwd, 0, "")
        else:
            result = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                                    timeout=600, check=False)
            ran = Ran(cwd, result.returncode, result.stdout + result.stderr)
        assert ran.code == code, f"$ {command}\n{ran.output}"
        assert "Traceback" not in ran.output, f"$ {command}\n{ran.output}"
        check(ran)
