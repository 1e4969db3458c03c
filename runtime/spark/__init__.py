"""Spark session construction and SQL execution (pyspark is imported lazily, inside functions)."""
