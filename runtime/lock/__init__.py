"""One run at a time per table (apply, maintain and erase share the locks), with locks that die with their
holder instead of outliving it by a fixed TTL.

Three stores, chosen by the catalog:

- PostgreSQL catalog: a session-level ``pg_try_advisory_lock`` per table, held on one dedicated connection
  for the run. PostgreSQL drops it the moment that connection closes, so a holder killed by SIGKILL or a
  crashed runner releases it at once (a dead host: within the TCP keepalive window this connection sets,
  about a minute). A row in ``tablepolicy_locks`` beside Iceberg's tables describes the holder (host,
  pid, command, since, heartbeat) for error messages and ``tablepolicy unlock``; it is not the lock.
- Another SQL database: the row is the lock (an INSERT on a primary key is atomic), kept alive by a
  heartbeat.
- Another catalog (REST, Glue, Hive) whose definition names ``tablepolicy.lock-location: s3://bucket/prefix``: an
  object per table written with S3's conditional writes (``If-None-Match: *`` to take it, ``If-Match`` on its
  ETag to beat and to remove it: objects.py), kept alive by a heartbeat; every runner of the catalog sees it.
- SQLite catalog, or another catalog without a lock location: a lock file (beside the SQLite database, so every
  run against it shares the files wherever it starts; else in the work tree's .tablepolicy/), kept alive by a
  heartbeat. SQLite gets files rather than rows so no
  second writer contends with Spark's JDBC connection for the database file.

A heartbeat thread refreshes the holder's ``heartbeat`` every interval (15 s; ``TABLEPOLICY_LOCK_HEARTBEAT``
shortens it) and the lock records its own interval, so whoever reads it judges it by the holder's pace: it
is dead once its heartbeat is older than ``STALE_AFTER_BEATS`` intervals (or, on the holder's own host, once
its pid is gone). A lock is only ever removed by a compare-and-swap on exactly what was judged dead, so a
holder that beats in between keeps it. A holder whose lock was taken over (``unlock --force``) notices at
its next heartbeat and its run ends with LockLostError.

Wall clocks of the hosts are compared (heartbeat against now): a skew of a few seconds is harmless against
a 60 s window; hosts without NTP are not.
"""

from .files import FileStore, lock_file_name
from .hold import (
    LOCK_WAIT,
    acquire_waiting,
    catalog_locks,
    hold,
    lock_engine,
    lock_store,
    store_for,
    table_locks,
    waiting_for_locks,
)
from .holder import (
    HEARTBEAT_ENV,
    Found,
    Holder,
    LockHeldError,
    LockLostError,
    LockSettingError,
    LockStore,
    UnlockError,
    ago,
    heartbeat_seconds,
    judge,
    lock_key,
    utc,
)
from .objects import LOCK_LOCATION, ObjectStore, ObjectStoreError, S3Settings
from .rows import AdvisoryStore, RowStore

__all__ = ["HEARTBEAT_ENV", "LOCK_LOCATION", "LOCK_WAIT", "AdvisoryStore", "FileStore", "Found", "Holder",
           "LockHeldError", "LockLostError", "LockSettingError", "LockStore", "ObjectStore", "ObjectStoreError",
           "RowStore", "S3Settings", "UnlockError", "acquire_waiting", "ago", "catalog_locks", "heartbeat_seconds",
           "hold", "judge", "lock_engine", "lock_file_name", "lock_key", "lock_store", "store_for", "table_locks",
           "utc", "waiting_for_locks"]
