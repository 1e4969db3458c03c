#!/usr/bin/env bash
# The no-JVM suite with the system clock set to the hours and days that broke tests before: 00:30 UTC on the
# last day of a month, two minutes before a new year (the run crosses midnight), and a leap day. A test that
# reads the wall clock where it should take a fixed instant fails here, whatever the hour CI happens to run.
#
# libfaketime (Debian's faketime) fakes the clock for every process the suite starts, but not the kernel's
# stamp on a file it writes: a test that compares a file it just wrote with time.time() dates it explicitly
# (os.utime with the process's clock). NO_FAKE_STAT=1 keeps stat as the kernel answers it.
# libfaketime 0.9.10 cannot fake a thread's timed wait on the monotonic clock (sem_clockwait gets a fake deadline
# days away and never wakes; turning monotonic faking off breaks time.sleep with EINVAL instead), so the one test
# that waits for a background thread's beat is left out here: it asserts a beat happened, never a time of day.
# The JVM does not run under libfaketime (py4j's gateway hangs), so Spark modules are not part of this run:
# they read Iceberg's snapshot times, which come from the JVM's real clock, and derive "recent" from it.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v faketime >/dev/null 2>&1; then
  echo "error: faketime is not installed: apt-get install -y faketime (Debian's libfaketime)" >&2
  exit 1
fi

INSTANTS=("${@:-}")
if [ -z "${INSTANTS[0]}" ]; then
  INSTANTS=("2026-11-30 00:30:00" "2026-12-31 23:58:00" "2028-02-29 00:30:00")
fi

HEARTBEAT=tests/process/test_lock_journal.py::test_a_lock_file_carries_a_heartbeat_the_holder_refreshes
status=0
for instant in "${INSTANTS[@]}"; do
  echo "== the suite at ${instant} UTC"
  if ! TZ=UTC NO_FAKE_STAT=1 faketime -f "@${instant}" .venv/bin/pytest -q -p no:cacheprovider -n auto \
      tests/unit tests/process --deselect "$HEARTBEAT"; then
    echo "error: the suite fails at ${instant} UTC" >&2
    status=1
  fi
done
exit $status
