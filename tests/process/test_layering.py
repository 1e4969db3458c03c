"""The layering contract: ``compiler/`` is pure, ``runtime/`` does the IO, and plans run without a JVM.

``compiler/`` never imports the runtime, Spark (pyspark, py4j), a catalog or database client (sqlalchemy,
pyiceberg.catalog, pyiceberg.io), processes, threads pools or sockets (multiprocessing, concurrent.futures,
subprocess, socket, network clients), and never writes, deletes or renames a file (``open`` for writing,
Path.write_text/write_bytes/mkdir/touch/unlink/rename/replace, os.makedirs/remove/rename/replace/fork,
shutil, tempfile). It takes the catalog, table health, caches and workers through small protocols
(compiler.plan.planner.StateSource, compiler.maintenance.due.HealthSource, compiler.plan.reuse.PlanCacheStore,
tablepolicy.compiler.parallel.Workers) that runtime/ implements.

Reading is allowed: the loader reads the policy files it is given and find_project walks up to the
project root. The contract forbids catalogs, engines, processes and writes, not reading policy text.

The check is on the syntax tree, so a name the tree cannot resolve is judged by its spelling: ``x.replace(a)``
with one argument is Path.replace (str.replace takes two), any ``.rename(...)`` is a rename, and an ``open``
whose mode is not a literal is taken as a write.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.imports import absolute, house_files, module_name

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN_MODULES = (
    "runtime", "tablepolicy.runtime", "tablepolicy.api", "tablepolicy.cli",  # the floors above
    "pyspark", "py4j",  # the JVM
    "sqlalchemy", "pyiceberg.catalog", "pyiceberg.io",  # catalogs, their databases and file systems
    "multiprocessing", "concurrent.futures", "subprocess", "threading", "socket",  # processes, threads, network
    "http.client", "urllib.request", "requests",
    "shutil", "tempfile",  # files written, copied, removed
)
WRITING_METHODS = {"write_text", "write_bytes", "mkdir", "touch", "unlink", "rmdir", "rename", "symlink_to",
                   "hardlink_to", "chmod"}
WRITING_OS = {"makedirs", "mkdir", "remove", "unlink", "rename", "renames", "replace", "rmdir", "removedirs",
              "fork", "forkpty", "system", "popen", "truncate", "write", "open", "symlink", "link", "chmod",
              "chown", "kill", "putenv", "unsetenv"}


def forbidden_module(name: str) -> bool:
    return any(name == f or name.startswith(f"{f}.") for f in FORBIDDEN_MODULES)


def _writing_mode(call: ast.Call, position: int) -> bool:
    """Whether an ``open`` call may write: its mode (argument ``position`` or ``mode=``) is not a literal
    read mode."""
    mode: ast.expr | None = call.args[position] if len(call.args) > position else None
    mode = next((k.value for k in call.keywords if k.arg == "mode"), mode)
    if mode is None:
        return False
    return not (isinstance(mode, ast.Constant) and isinstance(mode.value, str) and not set(mode.value) & set("wax+"))


def offences(source: str, package: str = "tablepolicy.compiler") -> list[str]:
    """Every forbidden import or writing call in ``source`` (a module of ``package``), as ``line: what``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):  # resolved as Python does: from ..x -> the parent's x
            node = absolute(node, package)
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if forbidden_module(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            if node.module == "os":
                names += [f"os.{a.name}" for a in node.names if a.name in WRITING_OS]
            found += [f"{node.lineno}: from {n}" for n in names if forbidden_module(n) or
                      (n.startswith("os.") and n[3:] in WRITING_OS)][:1]
        elif isinstance(node, ast.Call):
            found += [f"{node.lineno}: {what}" for what in _writing_call(node)]
    return found


def _writing_call(call: ast.Call) -> list[str]:
    func = call.func
    if isinstance(func, ast.Name):
        if func.id == "open" and _writing_mode(call, 1):
            return ["open for writing"]
        if func.id in ("__import__", "import_module") and call.args and isinstance(call.args[0], ast.Constant) \
                and forbidden_module(str(call.args[0].value)):
            return [f"imports {call.args[0].value}"]
        return []
    if not isinstance(func, ast.Attribute):
        return []
    owner = func.value.id if isinstance(func.value, ast.Name) else None
    if owner == "os" and (func.attr in WRITING_OS or func.attr.startswith(("spawn", "exec"))):
        return [f"os.{func.attr}"]
    if owner == "importlib" and func.attr == "import_module" and call.args \
            and isinstance(call.args[0], ast.Constant) and forbidden_module(str(call.args[0].value)):
        return [f"imports {call.args[0].value}"]
    if func.attr in WRITING_METHODS:
        return [f".{func.attr}()"]
    if func.attr == "replace" and len(call.args) == 1 and not call.keywords:  # Path.replace(target)
        return [".replace(target)"]
    if func.attr == "open" and _writing_mode(call, 0):
        return [".open() for writing"]
    return []


def test_compiler_imports_nothing_forbidden_and_writes_nothing() -> None:
    found = [f"{file.relative_to(ROOT)}:{offence}" for module, file in source_files().items()
             if module.startswith("tablepolicy.compiler")
             for offence in offences(file.read_text(encoding="utf-8"),
                                     module if file.name == "__init__.py" else module.rpartition(".")[0])]
    assert found == []


# Each of these, added to a compiler module, breaks the contract.
BREAKS = {
    "runtime": "from tablepolicy.runtime.catalog.reader import CatalogReader",
    "runtime_relative": "from ..runtime.catalog import reader",
    "api": "from tablepolicy.api import plan",
    "pyspark": "import pyspark.sql",
    "py4j": "from py4j import java_gateway",
    "sqlalchemy": "from sqlalchemy import text",
    "pyiceberg_catalog": "from pyiceberg.catalog import load_catalog",
    "pyiceberg_catalog_as_name": "from pyiceberg import catalog",
    "pyiceberg_io": "import pyiceberg.io.pyarrow",
    "multiprocessing": "import multiprocessing",
    "concurrent_futures": "from concurrent.futures import ProcessPoolExecutor",
    "concurrent_as_name": "from concurrent import futures",
    "subprocess": "import subprocess",
    "threading": "import threading",
    "socket": "import socket",
    "urllib_request": "from urllib.request import urlopen",
    "shutil": "import shutil",
    "tempfile": "import tempfile",
    "dynamic_import": "importlib.import_module('pyspark')",
    "open_w": "open(path, 'w')",
    "open_a_keyword": "open(path, mode='a')",
    "open_x": "open(path, 'xb')",
    "open_plus": "open(path, 'r+')",
    "open_unknown_mode": "open(path, mode)",
    "path_open_w": "path.open('w')",
    "write_text": "path.write_text('x')",
    "write_bytes": "path.write_bytes(b'x')",
    "mkdir": "path.mkdir(parents=True)",
    "touch": "path.touch()",
    "unlink": "path.unlink()",
    "path_rename": "path.rename(other)",
    "path_replace": "path.replace(other)",
    "os_makedirs": "os.makedirs(path)",
    "os_remove": "os.remove(path)",
    "os_rename": "os.rename(a, b)",
    "os_replace": "os.replace(a, b)",
    "os_fork": "os.fork()",
    "os_system": "os.system('ls')",
    "from_os_remove": "from os import remove",
}
# ... and these do not: reading, and the methods spelled like writes on other types.
ALLOWED = {
    "read_text": "path.read_text(encoding='utf-8')",
    "open_read": "open(path)",
    "open_read_mode": "open(path, 'rb')",
    "path_open_read": "path.open()",
    "str_replace": "text.replace('a', 'b')",
    "datetime_replace": "moment.replace(tzinfo=None)",
    "urllib_parse": "from urllib.parse import unquote",
    "pyiceberg_types": "from pyiceberg.types import LongType",
    "os_path": "os.path.join(a, b)",
}


# What validate, plan, drift, import and doctor load from runtime/: none may bring Spark in.
JVM_FREE = ("tablepolicy.cli.app", "tablepolicy.cli.commands", "tablepolicy.cli.doctor", *(
    f"tablepolicy.runtime.{m}" for m in ("catalog.config", "catalog.reader", "catalog.estimate", "health", "target",
                                         "forked", "caches.models", "caches.plans", "doctor")))
BLOCK_SPARK = textwrap.dedent("""
    import importlib, sys

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("pyspark", "py4j"):
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, Block())
    for module in sys.argv[1:]:
        importlib.import_module(module)
    print(sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j")))
""")


def test_runtime_modules_of_validate_plan_drift_and_import_load_without_spark() -> None:
    result = subprocess.run([sys.executable, "-c", BLOCK_SPARK, *JVM_FREE], capture_output=True, text=True,
                            cwd=ROOT, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"


def test_validate_ddl_and_plan_run_with_pyspark_unimportable(tmp_path: Path) -> None:
    """Run the real CLI where `import pyspark` raises."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "pyspark").mkdir()
    (blocker / "pyspark" / "__init__.py").write_text("raise ImportError('pyspark is blocked in this test')\n")
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    for command in (["validate"], ["ddl"], ["plan", "--detailed-exitcode"]):
        result = subprocess.run(
            [sys.executable, "-c", "from tablepolicy.cli.app import main; main()", *command, str(policies)],
            capture_output=True, text=True, cwd=tmp_path,
            env={"PYTHONPATH": f"{blocker}:{ROOT}", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            check=False,
        )
        assert result.returncode in (0, 2), result.stderr
        assert "blocked" not in result.stderr


def source_files() -> dict[str, Path]:
    """Installed module name -> its file, each file once (the links under tablepolicy/ are not walked twice)."""
    return {module_name(file): file for file in house_files()}


def imported_names(module: str, file: Path) -> set[str]:
    """The absolute names ``module`` imports, wherever the import stands (a function's lazy import is as much a
    dependency as one at the top; only ``if TYPE_CHECKING:`` blocks, which never run, are left out). Relative
    imports are resolved as Python resolves them."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    skipped = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
               and "TYPE_CHECKING" in ast.unparse(block.test) for stmt in block.body for n in ast.walk(stmt)}
    package = module if file.name == "__init__.py" else module.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            named |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node, package).module or ""
            named |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return named


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of compiler/, runtime/ and tablepolicy/ it imports."""
    modules = source_files()
    graph: dict[str, set[str]] = {}
    for module, file in modules.items():
        deps = set()
        for name in imported_names(module, file):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module:
                deps.add(name)
        graph[module] = deps
    return graph


def rooms() -> dict[str, str]:
    """Installed module name -> its file's path in the repository (``compiler/plan/planner.py``)."""
    return {module: file.relative_to(ROOT).as_posix() for module, file in source_files().items()}


def arrows_back_up(graph: dict[str, set[str]], paths: dict[str, str]) -> list[str]:
    """In every folder of the house (the root included), the rooms it holds (a file, or a subfolder seen as one room)
    must stand in floors: a room imports only rooms below it. Two rooms of one folder that reach each other, through
    any of their files, put an arrow back up; each such arrow as ``folder: a -> b (file -> file)``."""
    found = []
    folders = {""} | {"/".join(p.split("/")[:i]) for p in paths.values() for i in range(1, p.count("/") + 1)}
    for folder in sorted(folders):
        prefix = f"{folder}/" if folder else ""

        def room(path: str, prefix: str = prefix) -> str | None:
            if not path.startswith(prefix) or path == f"{prefix}__init__.py":
                return None  # outside the folder, or its face
            return path[len(prefix):].split("/")[0]

        edges: dict[str, set[str]] = {}
        witness: dict[tuple[str, str], str] = {}
        for module, deps in graph.items():
            a = room(paths[module])
            for dep in deps:
                b = room(paths[dep])
                if a and b and a != b:
                    edges.setdefault(a, set()).add(b)
                    edges.setdefault(b, set())
                    witness.setdefault((a, b), f"{paths[module]} -> {paths[dep]}")
        for group in circles(edges):
            found += [f"{folder or '.'}: {a} -> {b} ({witness[a, b]})" for a in group
                      for b in sorted(edges[a]) if b in group]
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for dep in sorted(graph[module]):
            if dep not in index:
                visit(dep)
                low[module] = min(low[module], low[dep])
            elif dep in stack:
                low[module] = min(low[module], index[dep])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_import_circle_in_compiler_runtime_or_the_api() -> None:
    """Each module has one room: a module that imports another which imports it back (even lazily, inside a
    function) is two rooms pretending to be one; split what they share into a module both import."""
    assert circles(import_graph()) == []


def test_no_arrow_runs_back_up_in_any_folder() -> None:
    """Every folder's rooms stand in floors, the house's too: the CLI above the API, the API above the runtime, the
    runtime above the compiler; inside the compiler, sql/ below plan/ and render/, model/ below everything."""
    assert arrows_back_up(import_graph(), rooms()) == []


def test_an_arrow_back_up_between_folders_is_found() -> None:
    graph = {"p.a.x": {"p.b.y"}, "p.b.y": set(), "p.b.z": {"p.a.w"}, "p.a.w": set()}
    paths = {"p.a.x": "a/x.py", "p.b.y": "b/y.py", "p.b.z": "b/z.py", "p.a.w": "a/w.py"}
    assert circles(graph) == []  # no module circle, yet a/ and b/ use each other
    assert arrows_back_up(graph, paths) == [".: a -> b (a/x.py -> b/y.py)", ".: b -> a (b/z.py -> a/w.py)"]


def test_relative_imports_resolve_as_python_resolves_them(tmp_path: Path) -> None:
    file = tmp_path / "planner.py"
    file.write_text("from ..diff import changes\nfrom . import model\nfrom ...runtime.apply import x\n")
    assert imported_names("tablepolicy.compiler.plan.planner", file) >= {
        "tablepolicy.compiler.diff.changes", "tablepolicy.compiler.plan.model", "tablepolicy.runtime.apply.x"}


def test_the_circle_check_finds_a_lazy_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# What the runtime reads once, at the edge, and hands the compiler as values: the process environment
# (TABLEPOLICY_ENV and the like) and the clock (``today``, ``now``). Dotted as written in the source.
EDGE_READS = {"os.environ", "os.environb", "os.getenv", "os.getenvb", "environ", "getenv",
              "datetime.now", "datetime.utcnow", "datetime.today", "date.today", "datetime.datetime.now",
              "datetime.datetime.utcnow", "datetime.datetime.today", "datetime.date.today",
              "time.time", "time.time_ns", "time.monotonic", "time.monotonic_ns", "time.perf_counter",
              "time.perf_counter_ns", "time.localtime", "time.gmtime", "time.ctime", "time.asctime"}


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return f"{owner}.{node.attr}" if owner is not None else None
    return None


def edge_reads(source: str) -> list[str]:
    """Every read of the process environment or the clock in ``source``, as ``line: what``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module in ("os", "time", "datetime"):
            found += [f"{node.lineno}: from {node.module} import {a.name}" for a in node.names
                      if f"{node.module}.{a.name}" in EDGE_READS]
        elif isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            # the longest spelling only: datetime.datetime.now, not also datetime.datetime
            if dotted is not None and (dotted in EDGE_READS or node.attr in ("environ", "environb", "getenv")):
                found.append(f"{node.lineno}: {dotted}")
    return sorted(set(found), key=lambda f: (int(f.split(":")[0]), f))


def test_the_compiler_reads_no_process_environment_and_no_clock() -> None:
    """The runtime reads TABLEPOLICY_ENV and the like, and the clock, once, at the edge, and hands the compiler
    values (``make_plan(..., today=...)``): a plan is a function of its inputs, never of when or where it runs."""
    readers = [f"{file.relative_to(ROOT)}:{found}" for file in sorted((ROOT / "compiler").rglob("*.py"))
               for found in edge_reads(file.read_text(encoding="utf-8"))]
    assert readers == []


EDGE_BREAKS = {
    "os_environ": "os.environ.get('TABLEPOLICY_ENV')",
    "os_environ_item": "os.environ['HOME']",
    "os_getenv": "os.getenv('HOME')",
    "from_os_environ": "from os import environ",
    "from_os_getenv": "from os import getenv",
    "datetime_now": "datetime.now(UTC)",
    "datetime_utcnow": "datetime.utcnow()",
    "date_today": "date.today()",
    "module_datetime_now": "datetime.datetime.now()",
    "module_date_today": "datetime.date.today()",
    "time_time": "time.time()",
    "time_monotonic": "time.monotonic()",
    "time_perf_counter": "time.perf_counter()",
    "from_time_time": "from time import time",
    "from_time_monotonic": "from time import monotonic",
}
EDGE_ALLOWED = {
    "date_value": "date(2026, 1, 15)",
    "date_fromisoformat": "date.fromisoformat(text)",
    "datetime_combine": "datetime.combine(day, time.min, UTC)",
    "timedelta": "timedelta(days=1)",
    "from_datetime_types": "from datetime import UTC, date, datetime, time",
    "os_path": "os.path.join(a, b)",
    "today_parameter": "retention_cutoff(today, keep)",
}


Check = Callable[[str], list[str]]
REFUSED = [pytest.param(offences, source, id=name) for name, source in BREAKS.items()] + [
    pytest.param(edge_reads, source, id=name) for name, source in EDGE_BREAKS.items()]
LET_BE = [pytest.param(offences, source, id=name) for name, source in ALLOWED.items()] + [
    pytest.param(edge_reads, source, id=name) for name, source in EDGE_ALLOWED.items()]


@pytest.mark.parametrize(("check", "source"), REFUSED)
def test_the_contract_refuses(check: Check, source: str) -> None:
    assert len(check(source)) == 1, check(source)


@pytest.mark.parametrize(("check", "source"), LET_BE)
def test_the_contract_allows(check: Check, source: str) -> None:
    assert check(source) == []
