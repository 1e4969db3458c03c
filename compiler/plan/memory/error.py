"""The one error of the in-memory apply (compiler/plan/memory/apply.py), in a module of its own so the schema and
partition spec edits (memory_schema.py, memory_spec.py) can raise it without importing the apply that calls them."""


class MemoryApplyError(ValueError):
    """A change Iceberg would refuse on this state (the plan's order or the change itself is wrong)."""
