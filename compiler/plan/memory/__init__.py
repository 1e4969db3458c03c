"""A plan applied to tables held in memory, as Iceberg's Java API would apply it (schema, partition spec, the
differences it finds): what the plan's verification and the tests use instead of an engine."""
