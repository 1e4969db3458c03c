"""Validation throughput: 2,000 generated policy files, against the floor of bare YAML parsing.

The floor is ``yaml.load(text, CSafeLoader)`` on the same texts: libyaml, the fastest parser at hand,
with no positions, no models and no checks. ruamel.yaml's round-trip parse (what ``fmt`` uses) is shown
for scale. Both sides run in this process on the same files; validate also once with its forked workers
turned off. Target: validate <= 3x the floor.
Run: .venv/bin/python bench/validate.py [N]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import yaml
from ruamel.yaml import YAML

from compiler import validate as validation
from compiler.validate import validate

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


def main() -> None:
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
