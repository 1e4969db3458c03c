"""tablepolicy runtime: catalogs, Spark, files and the terminal. Imports pyspark only where it runs Spark."""
