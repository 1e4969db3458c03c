"""Renderers of the one plan model: Spark SQL (jinja2 templates), text, markdown, JSON."""
