"""Erasure pruned by metadata (issue 38): `tablepolicy erase` with pruning against `--no-prune`, side by side, on a
table of FILES parquet files and ROWS rows (default 5,000 and 50M) on this machine's disk and on the S3 server (moto
on 127.0.0.1, behind a counting proxy in this process).

The table: rows sorted by user_id over the files (10 rows a user; each file holds a contiguous block of users, as a
table with a sort order does), ROW_GROUPS row groups a file, a Parquet bloom filter on user_id in every file (fpp
--fpp), written by pyarrow with Iceberg field ids and fast-appended by pyiceberg in commits of 500 files into an
SQLite catalog (the embedded catalog's kind). Built once into --data-dir and reused; every run erases from a fresh
copy (files restored from the pristine copy, catalog.db copied back: erase deletes rows and files).
Scenarios: A, --requests subjects in as many files; B, one subject in every file (no pruning possible); C, A on a
local standalone cluster (`--spark-master spark://... --cluster-above 1B`) against this process (skipped, saying
so, when the installed erase has no --cluster-above).

Bytes are counted by the store: on disk, rchar of /proc/self/io (bytes the process got from read syscalls, page
cache hits included; read_bytes would count only misses), on S3 the proxy's GET response bytes. The erase process
wraps runtime.erase.survey (the survey after each step and the proof's) with the counter, so "survey+proof" is
what those calls read. The reference is a full key-column read: every data file's user_id column read with
pyarrow, counted the same way. Targets: survey+proof <= 10% of that, whole erase >= 5x faster than --no-prune (A);
no slower than --no-prune (B). --today: the installed erase as one side (before pruning: it reads every file).
Run: .venv/bin/python bench/erase_pruning.py [--files 500 --rows 5000000] [--scenarios A,B,C] [--stores disk,s3]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyarrow import fs as pafs  # noqa: E402
from pyiceberg.catalog import load_catalog  # noqa: E402
from pyiceberg.io.pyarrow import (  # noqa: E402
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
    schema_to_pyarrow,
)
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat  # noqa: E402

from bench.counting_proxy import COUNTER, CountingProxy  # noqa: E402
from tablepolicy.compiler.desired import desired_states  # noqa: E402
from tablepolicy.compiler.validate import validate  # noqa: E402
from tests.catalog_fixtures import create_like  # noqa: E402
from tests.integration.conftest import spark_cluster  # noqa: E402
from tests.s3server import s3_server  # noqa: E402

POLICY = """table: bench.events
columns:
  - {name: event_id, type: long}
  - {name: user_id, type: string}
  - {name: payload, type: string}
lifecycle:
  erasure: {key: [user_id], within: 30d}  # bloom filters on user_id by default (planned properties)
"""
ROWS_PER_USER, COMMIT, BUCKET = 10, 500, "bench"
# runs the CLI with every survey (the steps' and the proof's) counted by the store's counter
WRAP = """import atexit, json, os, time, urllib.request
import tablepolicy.runtime.erase as erase
from tablepolicy.cli.app import main
url = os.environ["BENCH_COUNTER"]
def count():
    if url == "proc":
        return int(dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())["rchar"])
    return int(urllib.request.urlopen(url).read())
seen = {"surveys": 0, "survey_bytes": 0, "survey_seconds": 0.0, "first": count()}
inner = erase.survey
def counted(*args, **kwargs):
    before, began = count(), time.perf_counter()
    try:
        return inner(*args, **kwargs)
    finally:
        seen["surveys"] += 1
        seen["survey_bytes"] += count() - before
        seen["survey_seconds"] += time.perf_counter() - began
erase.survey = counted
done = lambda: json.dumps({**seen, "total": count() - seen["first"]})
atexit.register(lambda: open(os.environ["BENCH_OUT"], "w").write(done()))
main()
"""


def user(n: int) -> str:
    return f"user-{n:09d}"


class Shape:
    def __init__(self, files: int, rows: int, row_groups: int, fpp: float) -> None:
        self.files, self.row_groups, self.fpp = files, row_groups, fpp
        self.users_per_file = max(1, rows // files // ROWS_PER_USER)
        self.rows_per_file = self.users_per_file * ROWS_PER_USER
        self.name = f"{files}f-{self.rows_per_file * files}r-{row_groups}rg-fpp{fpp}"

    def subjects(self, scenario: str, count: int) -> list[str]:
        """A: ``count`` users in as many files spread over the table; B: one user in every file."""
        chosen = range(self.files) if scenario == "B" else [i * self.files // count for i in range(count)]
        return [user(f * self.users_per_file + self.users_per_file // 2) for f in chosen]

    def rows(self, index: int, schema: pa.Schema) -> pa.Table:
        first = index * self.rows_per_file
        event = pa.array(range(first, first + self.rows_per_file), pa.int64())
        uid = pc.add(pc.divide(pc.subtract(event, first), ROWS_PER_USER), index * self.users_per_file)
        names = pc.binary_join_element_wise("user-", pc.utf8_lpad(pc.cast(uid, pa.string()), 9, "0"), "")
        payload = pc.binary_join_element_wise("event payload ", pc.cast(pc.bit_wise_and(event, 1023), pa.string()), "")
        return pa.Table.from_arrays([event, names, payload], schema=schema)


class Store:
    """Where a table's files live: a folder (files hard-linked in), or a bucket on the S3 server."""

    def __init__(self, label: str, warehouse: str, properties: dict[str, str], client: Any = None) -> None:
        self.label, self.warehouse, self.properties, self.client = label, warehouse, properties, client

    def path(self, rel: str) -> Path:
        return Path(self.warehouse.removeprefix("file://"), rel)

    def listing(self) -> dict[str, int]:
        if self.client is None:
            root = self.path("")
            return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix="wh/")
        return {o["Key"].removeprefix("wh/"): o["Size"] for page in pages for o in page.get("Contents", [])}

    def put(self, rel: str, source: Path) -> None:
        if self.client is not None:
            self.client.upload_file(str(source), BUCKET, f"wh/{rel}")
            return
        self.path(rel).parent.mkdir(parents=True, exist_ok=True)
        self.path(rel).unlink(missing_ok=True)
        os.link(source, self.path(rel))  # files are immutable: a link is a copy

    def get(self, rel: str, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        if self.client is not None:
            self.client.download_file(BUCKET, f"wh/{rel}", str(target))
        else:
            os.link(self.path(rel), target)

    def delete(self, rel: str) -> None:
        if self.client is not None:
            self.client.delete_object(Bucket=BUCKET, Key=f"wh/{rel}")
        else:
            self.path(rel).unlink()


def parallel(work: Callable[[Any], Any], items: list[Any]) -> None:
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(work, items))


def write_parquet(shape: Shape, folder: Path, schema: pa.Schema) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    options = {"user_id": {"ndv": shape.users_per_file, "fpp": shape.fpp}}
    for i in range(shape.files):
        if not (target := folder / f"part-{i:05d}.parquet").exists():
            pq.write_table(shape.rows(i, schema), str(target) + ".tmp", compression="zstd",
                           row_group_size=-(-shape.rows_per_file // shape.row_groups), bloom_filter_options=options)
            os.replace(str(target) + ".tmp", target)


def build(shape: Shape, base: Path, store: Store) -> None:
    """The table in ``store``, its catalog in base/project; the pristine copy in base/pristine."""
    if (base / "pristine" / "catalog.db").exists():
        return
    shutil.rmtree(base, ignore_errors=True)
    project = write_project(base, store)
    model, findings = validate(project / "policies")
    assert not findings.has_errors, [f.render() for f in findings]
    create_like(catalog(project), desired_states(model)[0])
    table = catalog(project).load_table("bench.events")
    parquet = base.parent / "parquet"
    write_parquet(shape, parquet, schema_to_pyarrow(table.schema()))
    rel = table.location().removeprefix(store.warehouse).strip("/") + "/data"
    names = sorted(p.name for p in parquet.glob("part-*.parquet"))
    parallel(lambda name: store.put(f"{rel}/{name}", parquet / name), names)
    plan, ids = compute_statistics_plan(table.schema(), table.properties), parquet_path_to_id_mapping(table.schema())
    for start in range(0, len(names), COMMIT):
        with table.transaction() as tx, tx.update_snapshot().fast_append() as append:
            for name in names[start:start + COMMIT]:
                meta = pq.read_metadata(parquet / name)
                stats = data_file_statistics_from_parquet_metadata(meta, plan, ids)
                append.append_data_file(DataFile.from_args(
                    content=DataFileContent.DATA, file_path=f"{table.location()}/data/{name}",
                    file_format=FileFormat.PARQUET, partition=stats.partition(table.spec(), table.schema()),
                    file_size_in_bytes=(parquet / name).stat().st_size, spec_id=table.spec().spec_id,
                    **stats.to_serialized_dict()))
        table = catalog(project).load_table("bench.events")
    data, pristine = {f"{rel}/{name}" for name in names}, base / "pristine" / "files"
    for key in (keys := list(store.listing())):
        (pristine / key).parent.mkdir(parents=True, exist_ok=True)
    parallel(lambda key: os.link(parquet / Path(key).name, pristine / key) if key in data
             else store.get(key, pristine / key), keys)
    shutil.copy(project / "catalog.db", base / "pristine" / "catalog.db")


def write_project(base: Path, store: Store) -> Path:
    project = base / "project"
    (project / "policies").mkdir(parents=True, exist_ok=True)
    (project / "policies" / "events.yaml").write_text(POLICY)
    (project / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {"bench": {
        "type": "sql", "uri": f"sqlite:///{project / 'catalog.db'}", "warehouse": store.warehouse,
        **store.properties}}}))
    return project


def catalog(project: Path) -> Any:
    return load_catalog("bench", **yaml.safe_load((project / ".pyiceberg.yaml").read_text())["catalog"]["bench"])


def restore(base: Path, store: Store) -> None:
    """The table as built: files erase added deleted, files it deleted put back, the catalog (and ledger) copied."""
    pristine = base / "pristine" / "files"
    want = {str(p.relative_to(pristine)): p.stat().st_size for p in pristine.rglob("*") if p.is_file()}
    have = store.listing()
    parallel(store.delete, [k for k in have if want.get(k) != have[k]])
    parallel(lambda k: store.put(k, pristine / k), [k for k in want if have.get(k) != want[k]])
    shutil.copy(base / "pristine" / "catalog.db", base / "project" / "catalog.db")
    (base / "project" / "tablepolicy-erasure-ledger.db").unlink(missing_ok=True)  # beside the catalog's database


def counter_of(proxy: CountingProxy | None) -> Callable[[], int]:
    if proxy is None:
        return lambda: int(dict(x.split(": ") for x in Path("/proc/self/io").read_text().splitlines())["rchar"])
    return lambda: proxy.served


def key_column_read(store: Store, proxy: CountingProxy | None) -> tuple[int, int, float]:
    """(files, bytes the store served, seconds) for reading every data file's user_id column with pyarrow."""
    files = [k for k in store.listing() if k.endswith(".parquet")]
    if proxy is None:
        filesystem, prefix = pafs.LocalFileSystem(), str(store.path(""))
    else:
        filesystem = pafs.S3FileSystem(access_key=store.properties["s3.access-key-id"],
                                       secret_key=store.properties["s3.secret-access-key"], region="us-east-1",
                                       endpoint_override=proxy.endpoint, scheme="http", allow_bucket_creation=False)
        prefix = f"{BUCKET}/wh"
    count, began = counter_of(proxy), time.perf_counter()
    before = count()

    def read(key: str) -> None:
        with filesystem.open_input_file(f"{prefix}/{key}") as handle:
            pq.ParquetFile(handle).read(columns=["user_id"])

    with ThreadPoolExecutor(4) as pool:  # erase's own reader count (runtime/erasure/survey.py READERS)
        list(pool.map(read, files))
    return len(files), count() - before, time.perf_counter() - began


def layout(parquet: Path) -> str:
    """The cost model's inputs, from a sample of the data files' footers."""
    sample = sorted(parquet.glob("part-*.parquet"))[::50] or sorted(parquet.glob("part-*.parquet"))
    sizes, footers, blooms, keys = [], [], [], []
    for path in sample:
        meta = pq.read_metadata(path)
        column = meta.schema.names.index("user_id")
        chunks = [meta.row_group(g).column(column) for g in range(meta.num_row_groups)]
        sizes.append(path.stat().st_size)
        footers.append(meta.serialized_size + 8)  # the footer and its length and magic
        blooms.append(sum(c.bloom_filter_length or 0 for c in chunks))
        keys.append(sum(c.total_compressed_size for c in chunks))
    mean = statistics.mean
    return (f"per file (mean of {len(sample)}): {mean(sizes):,.0f} B; footer {mean(footers):,.0f} B; bloom filters "
            f"{mean(blooms):,.0f} B; key column chunks {mean(keys):,.0f} B")


def erase_once(shape: Shape, base: Path, store: Store, proxy: CountingProxy | None, subjects: list[str],
               flags: list[str]) -> dict[str, Any]:
    restore(base, store)
    project = base / "project"
    (project / "requests.csv").write_text("id,received,user_id\n" + "".join(
        f"REQ-{i:05d},2026-11-02,{s}\n" for i, s in enumerate(subjects)))
    out, proof = project / "counted.json", project / "proof.json"
    env = {**os.environ, "HOME": str(project), "NO_COLOR": "1", "BENCH_OUT": str(out),
           "PYSPARK_PYTHON": sys.executable,  # the cluster's executors run this Python: it has pyarrow
           "BENCH_COUNTER": "proc" if proxy is None else proxy.endpoint + COUNTER}
    served, began = proxy.served if proxy else 0, time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRAP, "erase", "policies", "--requests", "requests.csv", "--proof",
                           str(proof), "--catalog", "bench", "--debris-min-age", "0s", *flags], cwd=project,
                          env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    if done.returncode:
        raise SystemExit(f"erase {' '.join(flags)} failed on {store.label}:\n{done.stdout[-3000:]}\n"
                         f"{done.stderr[-3000:]}")
    (table,) = json.loads(proof.read_text())["tables"]
    assert table["state"] == "complete" and table["rows_after"] == 0, table["state"]
    assert table["rows_before"] == len(subjects) * ROWS_PER_USER, table["rows_before"]
    check_outside(shape, base, store, subjects)
    counted = json.loads(out.read_text())
    if not counted["surveys"] and "--spark-master" not in flags:  # the cluster path may survey on executors only
        raise SystemExit("erase called no tablepolicy.runtime.erase.survey: update WRAP in bench/erase_pruning.py")
    return {"seconds": seconds, "survey_bytes": counted["survey_bytes"], "surveys": counted["surveys"],
            "survey_seconds": counted["survey_seconds"], "proof_files": table["files_scanned"],
            "process_bytes": counted["total"] if proxy is None else (proxy.served - served)}


def check_outside(shape: Shape, base: Path, store: Store, subjects: list[str]) -> None:
    """Not the proof's word alone: no file that held a subject's rows (known by construction) is stored any more,
    and the table's live files count every other row."""
    held = {f"part-{int(s.removeprefix('user-')) // shape.users_per_file:05d}.parquet" for s in subjects}
    assert not [k for k in store.listing() if k.rsplit("/", 1)[-1] in held], "a file holding a key is still stored"
    table = catalog(base / "project").load_table("bench.events")
    rows = sum(task.file.record_count for task in table.scan().plan_files())
    assert rows == shape.files * shape.rows_per_file - len(subjects) * ROWS_PER_USER, rows


@contextlib.contextmanager
def cluster() -> Iterator[str]:
    """A standalone master and one worker on 127.0.0.1: the suite's own (tests/integration/conftest.py)."""
    started = contextlib.contextmanager(spark_cluster._get_wrapped_function())
    with tempfile.TemporaryDirectory() as logs, started(Path(logs)) as url:
        yield url


def erase_flags() -> str:
    done = subprocess.run([sys.executable, "-c", "from tablepolicy.cli.app import main; main()", "erase", "--help"],
                          capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    return done.stdout


def scenario(label: str, sides: dict[str, list[str]], run: Callable[[list[str]], dict[str, Any]], runs: int,
             reference: tuple[int, int, float], target: str) -> None:
    """Each side ``runs`` times, interleaved, the order reversed every other round (the first erase of a round ran
    about 10% slower in B whichever side it was: 55.1 s / 50.6 s with pruning always first, 48.1 s / 50.8 s the
    other way round); medians; ratios against the last side (the baseline)."""
    results: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for round_ in range(runs):
        for side, flags in (list(sides.items()) if round_ % 2 == 0 else list(sides.items())[::-1]):
            results[side].append(run(flags))
    medians = {side: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for side, rs in results.items()}
    baseline = medians[list(sides)[-1]]
    print(f"  {label} ({runs} run(s) a side, medians); full key-column read: {reference[0]:,} files, "
          f"{reference[1] / 2**20:,.1f} MiB, {reference[2]:.1f}s")
    for side, m in medians.items():
        print(f"    {side:<22} erase {m['seconds']:7.1f}s ({baseline['seconds'] / m['seconds']:5.2f}x faster than "
              f"{list(sides)[-1]}) | {m['surveys']:.0f} surveys {m['survey_seconds']:6.1f}s, read "
              f"{m['survey_bytes'] / 2**20:9.1f} MiB = {m['survey_bytes'] / reference[1]:6.1%} of the key-column "
              f"read | process {m['process_bytes'] / 2**20:9.1f} MiB | proof files {m['proof_files']:,.0f}")
    print(f"    target: {target}")


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    for flag, kind, default, text in [
        ("--files", int, 5_000, "data files"), ("--rows", int, 50_000_000, "rows"),
        ("--row-groups", int, 2, "row groups a file"), ("--fpp", float, 0.01, "bloom filters' false-positive rate"),
        ("--requests", int, 30, "scenario A's subjects"), ("--runs", int, 1, "runs a side, interleaved"),
        ("--data-dir", Path, Path(tempfile.gettempdir(), "tp-bench-erase-pruning"), "where built tables are kept"),
        ("--scenarios", str, "A,B,C", "which scenarios"), ("--stores", str, "disk,s3", "which stores")]:
        parser.add_argument(flag, type=kind, default=default, help=f"{text} (default {default})")
    parser.add_argument("--today", action="store_true",
                        help="one side: the installed erase with no flag (before pruning merged: reads every file)")
    parser.add_argument("--build-only", action="store_true", help="build (or check) the tables, run nothing")
    return parser.parse_args()


def main() -> None:
    args = options()
    shape, helps = Shape(args.files, args.rows, args.row_groups, args.fpp), erase_flags()
    if not args.today and "--no-prune" not in helps:
        raise SystemExit("the installed tablepolicy erase has no --no-prune (metadata pruning is not merged): "
                         "--today times the installed erase alone")
    sides = {"erase (no flag)": []} if args.today else {"pruned": [], "--no-prune": ["--no-prune"]}
    data = args.data_dir / shape.name
    print(f"table: {shape.files:,} files x {shape.rows_per_file:,} rows ({shape.files * shape.rows_per_file:,}), "
          f"{shape.row_groups} row group(s) a file, bloom filter fpp {shape.fpp}; data in {data}; "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    with contextlib.ExitStack() as stack:
        stores: dict[str, tuple[Store, CountingProxy | None]] = {}
        if "disk" in args.stores:
            stores["disk"] = (Store("disk", (data / "disk" / "project" / "warehouse").as_uri(), {}), None)
        if "s3" in args.stores:
            s3 = stack.enter_context(s3_server())
            s3.bucket(BUCKET)
            proxy = CountingProxy(s3.endpoint)
            threading.Thread(target=proxy.serve_forever, daemon=True).start()
            stack.callback(proxy.shutdown)
            properties = {**s3.pyiceberg_properties(), "s3.endpoint": proxy.endpoint}
            stores["s3"] = (Store("moto S3", f"s3://{BUCKET}/wh", properties, s3.client()), proxy)
        for name, (store, _) in stores.items():
            began = time.perf_counter()
            build(shape, data / name, store)
            write_project(data / name, store)  # this session's endpoint
            restore(data / name, store)
            print(f"{store.label}: table ready in {time.perf_counter() - began:.0f}s", flush=True)
        if args.build_only:
            return
        print(layout(data / "parquet"))
        a, b, master = shape.subjects("A", args.requests), shape.subjects("B", 0), None
        for name, (store, counted) in stores.items():
            reference = key_column_read(store, counted)
            print(f"{store.label}: full key-column read {reference[2] * 1000 / reference[0]:.1f} ms a file "
                  "(4 readers)", flush=True)

            def run(flags: list[str], subjects: list[str], base: Path = data / name, store: Store = store,
                    counted: CountingProxy | None = counted) -> dict[str, Any]:
                return erase_once(shape, base, store, counted, subjects, flags)

            for key, label, subjects, target in [
                    ("A", f"A: {len(a)} subjects in {len(a)} files", a,
                     "survey+proof <= 10% of the key-column read; pruned erase >= 5x faster"),
                    ("B", f"B: {len(b):,} subjects, one in every file", b, "pruned no slower than --no-prune"),
                    ("C", f"C: A's {len(a)} subjects, cluster vs this process", a, "the driver reads no data file")]:
                if key not in args.scenarios:
                    continue
                if key == "C" and "--cluster-above" not in helps:
                    print("  C: skipped: the installed tablepolicy erase has no --cluster-above (the cluster path is "
                          "not merged)")
                    continue
                if key == "C" and master is None:
                    master = stack.enter_context(cluster())  # one for both stores
                compared = sides if key != "C" else {
                    "cluster": ["--spark-master", str(master), "--cluster-above", "1B"], "this process": []}
                scenario(label, compared, functools.partial(run, subjects=subjects), args.runs, reference, target)
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
