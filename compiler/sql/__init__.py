"""Spark SQL for each change: the jinja2 templates, the filters that quote identifiers and values, and the
statements of a change. Below the plan (whose file records each step's SQL) and the renderers (which show it)."""
