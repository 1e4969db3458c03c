"""Between modules that run the CLI's Spark against different S3 servers in one pytest process."""

from __future__ import annotations


def stop_spark() -> None:
    """Stop this process's Spark session and drop the JVM's cached Hadoop file systems.

    The JVM outlives a session, and Hadoop caches a file system per scheme and bucket, not per settings: without
    ``closeAll`` the next module's session is handed an S3A client bound to the previous module's endpoint (a
    server since stopped), and its first write retries against it for many minutes.
    """
    from pyspark.sql import SparkSession

    active = SparkSession._instantiatedSession
    if active is not None:
        active._jvm.org.apache.hadoop.fs.FileSystem.closeAll()
        active.stop()
