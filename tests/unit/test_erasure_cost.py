"""The cost before the work, as the dry run prints it and its JSON carries it (compiler/erasure/cost.py,
compiler/render/erasure.py): what the survey and the proof read after pruning, what is rewritten, and where."""

from __future__ import annotations

import json

import pytest

from tablepolicy.compiler.erasure.cost import ErasureCost, Placement
from tablepolicy.compiler.render.erasure import cost_lines
from tablepolicy.runtime.erasure import arrow_rewrite
from tablepolicy.runtime.erasure.arrow_rewrite import rewrite_placement

GIB = 2**30


LOCAL, PYARROW = Placement(False, "local master local[2]"), Placement(False, "pyarrow")


def cost(*, pruned: bool = True, read: int = 12, reads: Placement = LOCAL, rewrite: Placement = PYARROW
         ) -> ErasureCost:
    excluded = (("bounds", 4_900, 40 * GIB), ("statistics", 0, 0), ("bloom_filter", 88, GIB), ("no_key_column", 0, 0))
    return ErasureCost(files_listed=5_000, bytes_listed=42 * GIB, files_read=read, bytes_read=96 * 2**20,
                       excluded=excluded if pruned else (), pruned=pruned, files_rewritten=3,
                       bytes_rewritten=24 * 2**20, files_deleted=1, bytes_deleted=2**20, reads=reads, rewrite=rewrite)


@pytest.mark.parametrize(("case", "expected"), [
    (cost(), ["cost: the survey reads the key columns of 12 of 5,000 file(s) (96.0 MiB of 42.0 GiB listed; excluded "
              "unread: 4,900 by manifest bounds, 88 by bloom filters), and the proof as many again, in this process "
              "(local master local[2])",
              "cost: the delete rewrites 3 file(s) (24.0 MiB) and 1 file(s) no snapshot reads are deleted (1.0 MiB), "
              "the rewrite in this process (pyarrow)"]),
    (cost(pruned=False, read=5_000), ["cost: the survey reads the key columns of 5,000 of 5,000 file(s) (96.0 MiB of "
                                      "42.0 GiB listed; pruning off), and the proof as many again, in this process "
                                      "(local master local[2])"]),
    (cost(reads=Placement(True, "45,097,156,608 bytes listed, above the threshold 10.0 GiB"),
          rewrite=Placement(True, "Spark's executors: 24.0 MiB above 512.0 MiB")),
     ["cost: the survey reads the key columns of 12 of 5,000 file(s) (96.0 MiB of 42.0 GiB listed; excluded "
      "unread: 4,900 by manifest bounds, 88 by bloom filters), and the proof as many again, in the cluster "
      "(45,097,156,608 bytes listed, above the threshold 10.0 GiB)"]),
], ids=["pruned", "no-prune", "cluster"])
def test_the_dry_run_says_what_it_reads_rewrites_and_where(case: ErasureCost, expected: list[str]) -> None:
    assert cost_lines(case)[:len(expected)] == expected


def test_the_json_carries_the_same_figures() -> None:
    document = json.loads(json.dumps(cost().as_json()))
    assert document["files_read"] == 12 and document["bytes_read"] == 96 * 2**20
    assert document["excluded"]["bounds"] == {"files": 4_900, "bytes": 40 * GIB}
    assert document["reads"] == {"where": "this process", "why": "local master local[2]"}
    assert (document["files_rewritten"], document["files_deleted"]) == (3, 1)


@pytest.mark.parametrize(("master", "size", "cluster", "why"), [
    ("local[2]", 0, False, "nothing to rewrite"),
    ("local[2]", 2 * arrow_rewrite.CLUSTER_BYTES, False, "pyarrow"),
    ("spark://127.0.0.1:7077", arrow_rewrite.CLUSTER_BYTES, False, "pyarrow"),
    ("spark://127.0.0.1:7077", arrow_rewrite.CLUSTER_BYTES + 1, True, "Spark's executors"),
])
def test_the_rewrite_runs_where_stage_rewrite_decides(master: str, size: int, cluster: bool, why: str) -> None:
    found = rewrite_placement(master, size)
    assert found.cluster is cluster and found.why.startswith(why)
