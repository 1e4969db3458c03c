"""Validation throughput: 2,000 generated policy files, against the floor of bare YAML parsing.

The floor is ``yaml.load(text, CSafeLoader)`` on the same texts: libyaml, the fastest parser at hand,
with no positions, no models and no checks. ruamel.yaml's round-trip parse (what ``fmt`` uses) is shown
for scale. Both sides run in this process on the same files; validate also once with its forked workers
turned off. Target: validate <= 3x the floor.
Run: .venv/bin/python bench/validate.py [N]

``one-file [N]`` (default 10,000): ``tablepolicy validate`` of one file inside an N-file project, in fresh processes
(best of three), cold (no ``.tablepolicy/``: every file is parsed), warm (its model cache filled by a first run: nothing
changed, the saved findings answer) and warm with the file just edited (it alone is parsed, the project checked again),
beside the same file validated alone and ``python -c pass``. Target (issue 22): under 0.3 s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from ruamel.yaml import YAML

from tablepolicy.compiler import validate as validation
from tablepolicy.compiler.validate import validate

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = [p.read_text() for p in sorted((ROOT / "policies").rglob("*.yaml")) if "table:" in p.read_text()]


def generate(target: Path, count: int) -> list[Path]:
    files = []
    for i in range(count):
        text = TEMPLATES[i % len(TEMPLATES)]
        first = text.index("table: ")
        end = text.index("\n", first)
        namespace, name = text[first + 7 : end].split(".")
        text = text[:first] + f"table: {namespace}_{i % 40}.{name}_{i}" + text[end:]
        path = target / f"ns_{i % 40}" / f"t_{i}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        files.append(path)
    return files


def timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start


def best(*command: str, cwd: Path, repeat: int = 3, before: Callable[[int], None] | None = None
         ) -> tuple[float, float]:
    """Best wall time of ``repeat`` fresh processes (exit 0 or 1 both count: findings are not failures here), and
    their best CPU time (user + sys, which other sessions' load disturbs less). ``before``: run before each."""
    times, cpu = [], []
    for attempt in range(repeat):
        if before is not None:
            before(attempt)
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(process.pid, 0)
        times.append(time.perf_counter() - start)
        cpu.append(usage.ru_utime + usage.ru_stime)
    return min(times), min(cpu)


def one_file(count: int) -> None:
    tool = str(Path(sys.executable).parent / "tablepolicy")
    with tempfile.TemporaryDirectory() as tmp:
        big, alone = Path(tmp) / "big", Path(tmp) / "alone"
        (big / "policies").mkdir(parents=True)
        files = generate(big / "policies", count)
        one = files[count // 2].relative_to(big)
        (alone / "policies" / one.parent.name).mkdir(parents=True)
        shutil.copy(big / one, alone / one)
        cold, cold_cpu = best(tool, "validate", str(one), cwd=big)
        (big / ".tablepolicy").mkdir()
        subprocess.run([tool, "validate", "policies"], cwd=big, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        warm, warm_cpu = best(tool, "validate", str(one), cwd=big)
        text = (big / one).read_text()

        def edit(attempt: int) -> None:  # what a user validates after saving the file: its text changed
            (big / one).write_text(f"{text}# edit {attempt}\n")

        edited, edited_cpu = best(tool, "validate", str(one), cwd=big, before=edit)
        (big / one).write_text(text)
        single, single_cpu = best(tool, "validate", str(one), cwd=alone)
        python, python_cpu = best(sys.executable, "-c", "pass", cwd=big)
    cpu = {"cold": cold_cpu, "warm": warm_cpu, "edited": edited_cpu, "single": single_cpu, "python": python_cpu}
    print(f"validate one file of a {count:,}-file project (fresh processes, best of three; CPU: user + sys)")
    print(f"  cold (no .tablepolicy/):      {cold:.2f}s  = {cold / single:.1f}x the file alone  CPU {cpu['cold']:.2f}s")
    print(f"  warm (model cache filled):    {warm:.2f}s  = {warm / single:.1f}x the file alone  CPU {cpu['warm']:.2f}s")
    print(f"  warm, the file just edited:   {edited:.2f}s  = {edited / single:.1f}x the file alone  "
          f"CPU {cpu['edited']:.2f}s")
    print(f"  the file alone:               {single:.2f}s                          CPU {cpu['single']:.2f}s")
    print(f"  python -c pass:               {python:.2f}s                          CPU {cpu['python']:.2f}s")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f}")
    print("target: under 0.3s")


def main() -> None:
    if sys.argv[1:2] == ["one-file"]:
        one_file(int(sys.argv[2]) if len(sys.argv) > 2 else 10_000)
        return
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = generate(root, count)
        texts = [f.read_text() for f in files]

        def floor() -> None:
            for text in texts:
                yaml.load(text, Loader=yaml.CSafeLoader)

        def ruamel() -> None:
            for text in texts:
                YAML(typ="rt").load(text)

        def full() -> None:
            _, diagnostics = validate(root)
            assert not diagnostics.has_errors, [d.render() for d in diagnostics][:3]

        full()  # warm imports and caches on both sides
        floor()
        t_floor = min(timed(floor) for _ in range(3))
        t_full = min(timed(full) for _ in range(3))
        forked_from, validation.PARALLEL_FROM = validation.PARALLEL_FROM, 10**9
        t_serial = min(timed(full) for _ in range(3))
        validation.PARALLEL_FROM = forked_from
        t_ruamel = timed(ruamel)
    print(f"files:                          {count}")
    print(f"floor (PyYAML CSafeLoader):     {t_floor:.2f}s  {count / t_floor:,.0f} files/s")
    print(f"tablepolicy validate:           {t_full:.2f}s  {count / t_full:,.0f} files/s  "
          f"(forked workers on {os.cpu_count()} cores)")
    print(f"  in one process:               {t_serial:.2f}s  {count / t_serial:,.0f} files/s  "
          f"= {t_serial / t_floor:.2f}x floor")
    print(f"for scale, ruamel round-trip:   {t_ruamel:.2f}s  {count / t_ruamel:,.0f} files/s")
    print(f"ratio validate / floor:         {t_full / t_floor:.2f}x  (target <= 3x)")


if __name__ == "__main__":
    main()
