#!/usr/bin/env bash
# make demo-s3: the demo's whole loop with its tables on object storage. A local S3-compatible server (moto,
# from the dev lock) listens on 127.0.0.1 and a free port; the catalog is SQLite in .lake-s3/, the warehouse
# s3://demo-lake/wh; pyiceberg and Spark both read the one definition below. The server stops on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
port=$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
.venv/bin/moto_server -H 127.0.0.1 -p "$port" >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
endpoint="http://127.0.0.1:$port"
# The one catalog definition (what a .pyiceberg.yaml would say), as pyiceberg's environment variables.
export TABLEPOLICY_CATALOG=demo
export PYICEBERG_CATALOG__DEMO__TYPE=sql
export PYICEBERG_CATALOG__DEMO__URI="sqlite:///$PWD/.lake-s3/catalog.db"
export PYICEBERG_CATALOG__DEMO__WAREHOUSE=s3://demo-lake/wh
export PYICEBERG_CATALOG__DEMO__S3__ENDPOINT="$endpoint"
export PYICEBERG_CATALOG__DEMO__S3__REGION=us-east-1
export PYICEBERG_CATALOG__DEMO__S3__PATH_STYLE_ACCESS=true
export PYICEBERG_CATALOG__DEMO__S3__ACCESS_KEY_ID=demo-access-key
export PYICEBERG_CATALOG__DEMO__S3__SECRET_ACCESS_KEY=demo-secret-key
.venv/bin/python - "$endpoint" "$server" <<'PY'
import os, sys, time, urllib.request
import boto3
endpoint, server = sys.argv[1], int(sys.argv[2])
for _ in range(300):  # moto takes a few seconds to import: poll until it answers
    try:
        urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
        break
    except OSError:
        os.kill(server, 0)  # raises when the server died
        time.sleep(0.1)
else:
    sys.exit(f"moto_server did not answer on {endpoint}")
boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="demo-access-key",
             aws_secret_access_key="demo-secret-key", region_name="us-east-1").create_bucket(Bucket="demo-lake")
PY
echo "S3-compatible server on $endpoint (bucket demo-lake); catalog demo: .lake-s3/catalog.db, s3://demo-lake/wh"
echo
rm -rf .lake-s3 && mkdir -p .lake-s3  # the catalog file's folder; the demo starts from an empty catalog
echo "\$ tablepolicy doctor policies/ --write-probe"
.venv/bin/tablepolicy doctor policies/ --write-probe
DEMO_STATE=.lake-s3 bash scripts/demo.sh
echo
.venv/bin/python - "$endpoint" <<'PY'
import sys
import boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id="demo-access-key",
                  aws_secret_access_key="demo-secret-key", region_name="us-east-1")
count = sum(page.get("KeyCount", 0) for page in s3.get_paginator("list_objects_v2").paginate(Bucket="demo-lake"))
print(f"s3://demo-lake holds {count} objects; the server stops now")
PY
