"""tablepolicy compiler: policies -> validated model -> plan. Pure: no Spark, no JVM, no catalog writes."""

__version__ = "0.1.0"
