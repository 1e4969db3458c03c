"""Declared readers against what a table uses: the check validate runs on declared state, plan on each change
and health on the tables as they are (the capability table is tablepolicy.compiler.iceberg.readers)."""
