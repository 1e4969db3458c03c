"""Catalog IO without a JVM: configuration files and environment, pyiceberg catalogs, metadata and manifests.

Nothing here imports pyspark: ``validate``, ``plan``, ``drift`` and ``import`` use these modules on CI
machines without Spark (tests/test_layering.py checks it).
"""
