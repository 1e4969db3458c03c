"""Bad input through the CLI (run in this process), as a user (or an attacker) would type it.

Every class of the issue: a finding with a code, ``file:line:col``, a message and a hint; exit 1; never a
traceback or "internal error"; bounded memory (the peak of what the run allocates, measured by tracemalloc,
under a limit a bomb expanded in memory would far exceed; the run also gets at most 2 GiB more address space,
so such a regression fails as a MemoryError instead of exhausting the machine); and a ``plan`` of bad input
creates nothing (no embedded catalog appears).
"""

from __future__ import annotations

import contextlib
import re
import resource
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli_runner import tablepolicy

MEMORY_BOUND = 32 << 20  # bytes a run may allocate at its peak: the cases here need 8 MiB at most
ADDRESS_SPACE = 2 << 30  # more address space the run may take: a bomb expanded in memory would hit it
COLUMNS = "columns:\n  - {name: id, type: long, required: true}\n  - {name: ts, type: timestamptz}\n"


@contextlib.contextmanager
def address_space_limit(more: int) -> Iterator[None]:
    """This process may map at most ``more`` bytes beyond what it has mapped now, meanwhile (Linux)."""
    statm = Path("/proc/self/statm")
    if not statm.exists():  # elsewhere the limit is not measured (macOS does not enforce RLIMIT_AS anyway)
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    mapped = int(statm.read_text().split()[0]) * resource.getpagesize()
    limit = mapped + more if hard == resource.RLIM_INFINITY else min(mapped + more, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def run(args: list[str], cwd: Path) -> tuple[int, str, int]:
    """Exit code, output (stdout and stderr) and the peak bytes allocated of ``tablepolicy ARGS`` in ``cwd``."""
    tracing = tracemalloc.is_tracing()  # already (python -X tracemalloc): measured from what it holds now
    if not tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    held, _ = tracemalloc.get_traced_memory()
    try:
        with address_space_limit(ADDRESS_SPACE):
            done = tablepolicy(*args, cwd=cwd)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not tracing:
            tracemalloc.stop()
    return done.returncode, done.stdout + done.stderr, peak - held


def laughs(levels: int) -> str:
    """A "billion laughs": each anchor is nine aliases of the one before."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + f"\ntable: shop.bomb\ncolumns: *l{levels - 1}\n"


def struct_chain(depth: int) -> str:
    t = "string"
    for i in range(depth):
        t = f"{{struct: [{{name: f{i}, type: {t}}}]}}"
    return "table: shop.deep\ncolumns:\n  - name: deep\n    type: " + t + "\n"


@dataclass(frozen=True)
class Case:
    id: str
    files: dict[str, str | bytes]  # path under policies/ -> content
    code: str
    where: str  # "file:line" the finding points at (line omitted: the file or folder as a whole)
    message: str  # a fragment of the message or hint


CASES = [
    Case("alias_bomb", {"shop/bomb.yaml": laughs(10)}, "TP004", "bomb.yaml:1", "aliases expand"),
    Case("recursive_alias", {"shop/r.yaml": "table: shop.r\ncolumns: &c [*c]\n"}, "TP004", "r.yaml:2",
         "recursive alias"),
    Case("struct_500_deep", {"shop/deep.yaml": struct_chain(500)}, "TP005", "deep.yaml:4", "nesting deeper"),
    Case("brackets_100k_deep", {"shop/b.yaml": "table: shop.b\ncolumns: " + "[" * 100_000 + "]" * 100_000 + "\n"},
         "TP005", "b.yaml:2", "nesting deeper"),
    Case("huge_integer", {"shop/n.yaml": "table: shop.n\n" + COLUMNS + "format_version: " + "9" * 5000 + "\n"},
         "TP105", "n.yaml:5", "out of range"),
    Case("format_version_true", {"shop/o.yaml": "table: shop.o\n" + COLUMNS + "format_version: true\n"},
         "TP104", "o.yaml:5", "whole number"),
    Case("pinned_id_over_int32", {"shop/o.yaml": "table: shop.o\ncolumns: [{name: id, type: long, id: 2147483648}]\n"},
         "TP105", "o.yaml:2", "2147483647"),
    Case("bucket_over_int32",
         {"shop/o.yaml": "table: shop.o\n" + COLUMNS + "partition_by: ['bucket(4294967296, id)']\n"},
         "TP301", "o.yaml:5", "2147483647"),
    Case("size_beyond_long", {"shop/o.yaml": "table: shop.o\n" + COLUMNS
                              + "lifecycle: {compaction: {target_file_size: 9000000TB}}\n"}, "TP111", "o.yaml:5",
         "Java long"),
    Case("duration_overflows_dates", {"shop/o.yaml": "table: shop.o\n" + COLUMNS
                                      + "lifecycle: {retention: {column: ts, keep: 1000000w}}\n"}, "TP110", "o.yaml:5",
         "1000 years"),
    Case("identifier_twice", {"shop/o.yaml": "table: shop.o\n" + COLUMNS + "identifier_fields: [id, id]\n"},
         "TP315", "o.yaml:5", "listed twice"),
    Case("newline_in_table_name", {"shop/o.yaml": 'table: "shop.o\\nx"\n' + COLUMNS}, "TP101", "o.yaml:1",
         "control character"),
    Case("table_name_too_long", {"shop/o.yaml": "table: shop." + "t" * 250 + "\n" + COLUMNS}, "TP108", "o.yaml:1",
         "bytes long"),
    Case("latin1_file", {"shop/o.yaml": b"table: shop.o\ncolumns: [{name: caf\xe9, type: long}]\n"}, "TP008",
         "o.yaml:2", "save the file as UTF-8"),
    Case("upper_case_suffix", {"shop/o.YAML": "table: shop.o\n" + COLUMNS + "format_version: 7\n"}, "TP106",
         "o.YAML:5", "allowed values"),
    Case("empty_folder", {}, "TP006", "policies", "no policy files"),
    Case("no_policy_files", {"README.md": "# policies\n", "shop/notes.txt": "x\n"}, "TP006", "policies",
         "no policy files"),
]


def write(project: Path, files: dict[str, str | bytes]) -> Path:
    policies = project / "policies"
    policies.mkdir()
    for name, content in files.items():
        target = policies / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return policies


def assert_reported(code: int, output: str, case: Case) -> None:
    assert code == 1, output
    assert "Traceback" not in output and "internal error" not in output, output
    pattern = re.escape(case.where) + (r":\d+: " if ":" in case.where else r": ") + f"error {case.code}: "
    assert re.search(pattern, output), output
    assert case.message in output, output
    assert "hint: " in output, output


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_validate_reports_bad_input(tmp_path: Path, case: Case) -> None:
    write(tmp_path, case.files)
    code, output, peak = run(["validate", "policies"], tmp_path)
    assert_reported(code, output, case)
    assert peak < MEMORY_BOUND, f"validate allocated {peak / 2**20:.0f} MiB at its peak"


@pytest.mark.parametrize("case", [c for c in CASES if c.id in ("alias_bomb", "struct_500_deep", "empty_folder",
                                                               "format_version_true", "newline_in_table_name")],
                         ids=lambda c: c.id)
def test_plan_of_bad_input_creates_nothing(tmp_path: Path, case: Case) -> None:
    write(tmp_path, case.files)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    code, output, _ = run(["plan", "policies"], tmp_path)
    assert_reported(code, output, case)
    created = sorted(set(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) - set(before))
    assert not [p for p in created if ".lake" in p.parts], created  # no embedded catalog was made


def test_mistyped_path_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, {"shop/o.yaml": "table: shop.o\n" + COLUMNS})
    code, output, _ = run(["plan", "polices"], tmp_path)
    assert code == 1 and "polices: error TP000: no such file or directory" in output, output
    assert not (tmp_path / ".lake").exists() and not (tmp_path / "polices").exists()


def test_a_valid_64_deep_type_validates_in_bounded_memory(tmp_path: Path) -> None:
    t = "string"
    for i in range(63):
        t = f"{{struct: [{{name: f{i}, type: {t}}}]}}"
    write(tmp_path, {"shop/deep.yaml": "table: shop.deep\ncolumns:\n  - name: deep\n    type: {list: " + t + "}\n"})
    code, output, peak = run(["validate", "policies"], tmp_path)
    assert code == 0, output
    assert "1 file(s) checked: 0 error(s), 0 warning(s)" in output
    assert peak < MEMORY_BOUND, f"validate allocated {peak / 2**20:.0f} MiB at its peak"


@pytest.mark.parametrize("case", [c for c in CASES if c.id in ("alias_bomb", "brackets_100k_deep", "latin1_file")],
                         ids=lambda c: c.id)
def test_fmt_refuses_what_it_cannot_bound(tmp_path: Path, case: Case) -> None:
    policies = write(tmp_path, case.files)
    before = {p: p.read_bytes() for p in policies.rglob("*") if p.is_file()}
    code, output, peak = run(["fmt", "policies", "--check"], tmp_path)
    assert code == 1, output
    assert "not formatted" in output and "Traceback" not in output and "internal error" not in output, output
    assert {p: p.read_bytes() for p in policies.rglob("*") if p.is_file()} == before
    assert peak < MEMORY_BOUND, f"fmt allocated {peak / 2**20:.0f} MiB at its peak"
