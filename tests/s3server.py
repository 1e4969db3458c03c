"""A throwaway S3-compatible server for the object-storage tests: moto's server (PyPI ``moto[server]``) on
127.0.0.1 and a free port, stopped afterwards. Nothing leaves loopback; the keys are moto's test keys."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.pgserver import free_port

ACCESS_KEY = "tp-test-access-key"
SECRET_KEY = "tp-test-secret-key-do-not-print"  # tests assert this never appears in any output
REGION = "us-east-1"


@dataclass(frozen=True)
class S3Server:
    endpoint: str  # http://127.0.0.1:PORT

    def client(self) -> object:
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name=REGION)

    def bucket(self, name: str) -> str:
        """Creates bucket ``name``; returns ``s3://name``."""
        self.client().create_bucket(Bucket=name)  # type: ignore[attr-defined]
        return f"s3://{name}"

    def pyiceberg_properties(self) -> dict[str, str]:
        """The catalog definition's S3 properties, as a user writes them in .pyiceberg.yaml."""
        return {"s3.endpoint": self.endpoint, "s3.access-key-id": ACCESS_KEY, "s3.secret-access-key": SECRET_KEY,
                "s3.region": REGION, "s3.path-style-access": "true"}


@contextlib.contextmanager
def s3_server() -> Iterator[S3Server]:
    port = free_port()
    moto = Path(sys.executable).parent / "moto_server"
    env = {**os.environ, "MOTO_ALLOW_NONEXISTENT_REGION": "true"}
    process = subprocess.Popen([str(moto), "-H", "127.0.0.1", "-p", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # moto imports for a few seconds on a loaded machine: poll until it answers
            if process.poll() is not None:
                raise RuntimeError(f"moto_server exited with {process.returncode}")
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("moto_server did not answer on " + endpoint)
        yield S3Server(endpoint)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
