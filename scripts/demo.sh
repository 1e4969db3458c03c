#!/usr/bin/env bash
# The main job on the embedded catalog: validate, plan, apply through Spark, load rows, plan again,
# read table health, run the maintenance it calls for, erase two data subjects whose requests a privacy
# portal appended to the request table (privacy.erasure_requests in the catalog: no key value in git), plan again.
set -euo pipefail
cd "$(dirname "$0")/.."
tp() { echo; echo "\$ tablepolicy $*"; .venv/bin/tablepolicy "$@"; }

# DEMO_STATE: where the catalog lives (demo-s3.sh puts its catalog file there and its tables on S3)
state=${DEMO_STATE:-.lake}
rm -rf "$state"   # start from an empty catalog (.lake/catalog.db + .lake/warehouse by default)
mkdir -p "$state"
tp validate policies/
tp ddl policies/ | head -n 40
echo "  ... (tablepolicy ddl prints the rest)"
set +e
tp plan policies/ --detailed-exitcode
code=$?
set -e
echo "(plan exit code $code: 2 means there are changes)"
tp apply policies/ --auto-approve
tp plan policies/ --detailed-exitcode
echo
echo "\$ load sample rows (pyiceberg appends, the way a writer would)"
.venv/bin/python scripts/sample_rows.py policies/
tp plan policies/ --detailed-exitcode
tp health policies/
tp maintain policies/
tp health policies/
echo
echo "\$ two users ask to be forgotten: the privacy portal appends their requests to the request table"
.venv/bin/python scripts/demo_requests.py policies/
tp erase status policies/ --requests-table privacy.erasure_requests
tp erase policies/ --requests-table privacy.erasure_requests --proof "$state/erasure-proof.json"
echo "(proof written to $state/erasure-proof.json)"
tp erase status policies/
tp plan policies/ --detailed-exitcode
echo
echo "Done: the catalog ($state/) holds the declared tables; rows written by a writer did not change the plan;"
echo "maintenance compacted the small files the writer left and removed nothing git did not ask for;"
echo "two data subjects' rows are gone from every file the table keeps, with a proof; their requests keep only a"
echo "fingerprint of the keys in the request table (in the catalog, never in git), whose older snapshots expired."
