"""How long a REST server that misbehaves holds a run with the default settings (runtime/spark/catalog_conf.py
REST_DEFAULTS: rest.client.socket-timeout-ms 30000, rest.client.max-retries 3): `tablepolicy plan` through the
fault-injecting proxy of the tests (tests/rest_proxy.py) in front of SeaweedFS (tests/seaweed.py), once against a
server that accepts and never answers, once against one answering 503 to every read. Each plan is its own CLI
process (the interpreter's start included in the wall time).

Run: .venv/bin/python bench/rest_faults.py   (about a minute)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.rest_proxy import RestProxy, every, reads, rest_proxy  # noqa: E402
from tests.seaweed import seaweed_server  # noqa: E402

CLI = [sys.executable, "-c", "from tablepolicy.cli.app import main; main()"]


def main() -> None:
    with seaweed_server() as server, rest_proxy(server.uri) as proxy, tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / ".pyiceberg.yaml").write_text(
            yaml.safe_dump({"catalog": {"bench": proxy.properties(server.catalog_properties())}}))
        (root / "policies" / "ops").mkdir(parents=True)
        (root / "policies" / "ops" / "t.yaml").write_text("table: ops.t\ncolumns:\n  - {name: id, type: long}\n")
        faults: list[tuple[str, Callable[[RestProxy], None]]] = [
            ("never answers", lambda p: p.hang(every)),
            ("answers 503 to every read", lambda p: p.fail(503, None, reads)),
        ]
        for name, arm in faults:
            arm(proxy)
            started = time.monotonic()
            run = subprocess.run([*CLI, "plan", "policies"], cwd=root, capture_output=True, text=True,
                                 env={"TABLEPOLICY_CATALOG": "bench", "PATH": "/usr/bin:/bin",
                                      "PYTHONPATH": str(ROOT), "HOME": folder})
            spent = time.monotonic() - started
            print(f"plan, a server that {name}: exit {run.returncode} after {spent:.1f} s, "
                  f"{len(proxy.refused)} answers refused by the proxy")
            print(f"  {run.stderr.strip().splitlines()[-1][:300] if run.stderr.strip() else '(no error)'}")
            proxy.passing()
            proxy.refused.clear()


if __name__ == "__main__":
    main()
