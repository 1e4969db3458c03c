#!/usr/bin/env bash
# Regenerates the lock files under requirements/ from pyproject.toml (make lock; make lock-upgrade).
#
#   dev.lock    everything make dev puts in .venv: runtime, the spark, dev and docs extras, pip and setuptools
#   core.lock   what validate/plan/drift/import need (the plan and drift workflows): no Spark
#   spark.lock  core plus the spark extra (make install; the apply, maintain and erase workflows)
#
# core and spark are resolved with dev.lock as constraints, so a package has one version in all three.
# Without --upgrade, versions already locked stay (a new dependency or a changed range moves only what it
# must); with it, every package moves to its newest release within pyproject.toml's ranges.
# The lock is universal (markers for every platform, hashes of every file of each version), for Python 3.11+.
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION=0.13.9
PYTHON=${PYTHON:-python3}
TOOL=.lockenv
if [ ! -x "$TOOL/bin/uv" ] || [ "$("$TOOL/bin/uv" --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  "$PYTHON" -m venv --clear "$TOOL"
  "$TOOL/bin/pip" install -q "uv==$UV_VERSION"
fi
compile() {
  local out=$1; shift
  UV_CUSTOM_COMPILE_COMMAND="make lock" "$TOOL/bin/uv" pip compile --quiet --universal --python-version 3.11 \
    --generate-hashes --index-url https://pypi.org/simple --no-config "$@" -o "requirements/$out"
}
compile dev.lock pyproject.toml requirements/build.in --extra spark --extra dev --extra docs "$@"
compile core.lock pyproject.toml requirements/build.in -c requirements/dev.lock
compile spark.lock pyproject.toml requirements/build.in --extra spark -c requirements/dev.lock
cp requirements/dev.lock requirements.txt  # the same lock where pip users and tools look for one
echo "requirements/{dev,core,spark}.lock and requirements.txt written; review the diff and commit it with pyproject.toml"
