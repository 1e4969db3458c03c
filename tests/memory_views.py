"""Views as a catalog holds them, in memory: a view policy as an apply left it -> Iceberg view metadata JSON (as
Spark's CREATE VIEW writes it: the SQL for dialect spark, a schema with column docs, Spark's own properties)
-> read back as the planner reads a catalog's view (tablepolicy.compiler.model.view.current_view)."""

from __future__ import annotations

from typing import Any

from tablepolicy.compiler.diff.views import stamped
from tablepolicy.compiler.model.view import COMMENT_KEY, CurrentView, current_view, desired_view
from tests.memory_catalog import project_of

SPARK_PROPERTIES = {"create_engine_version": "Spark 3.5.9", "engine_version": "Spark 3.5.9",
                    "spark.query-column-names": "id"}


def view_metadata(text: str, *, properties: dict[str, str] | None = None, version_id: int = 1,
                  columns: tuple[str, ...] = ("id",)) -> dict[str, Any]:
    """The metadata of the view ``text`` declares (``columns``: the SELECT's, where git lists none)."""
    [view] = project_of(text).views
    state = stamped(desired_view(view.policy, view.name))  # as apply leaves it: declared keys recorded
    fields = state.columns or tuple((c, None) for c in columns)
    props = {**SPARK_PROPERTIES, **state.properties, **({COMMENT_KEY: state.comment} if state.comment else {}),
             **(properties or {})}
    return {
        "view-uuid": "00000000-0000-4000-8000-00000000000v".replace("v", "1"),
        "format-version": 1,
        "location": "file:///lake/warehouse/" + "/".join(view.name),
        "properties": props,
        "schemas": [{"type": "struct", "schema-id": 0, "fields": [
            {"id": i, "name": name, "required": False, "type": "long", **({"doc": doc} if doc else {})}
            for i, (name, doc) in enumerate(fields)]}],
        "current-version-id": version_id,
        "versions": [{"version-id": version_id, "timestamp-ms": 1767225600000, "schema-id": 0,
                      "summary": {"engine-name": "spark"}, "default-namespace": [],
                      "representations": [{"type": "sql", "sql": state.sql, "dialect": "spark"}]}],
        "version-log": [{"timestamp-ms": 1767225600000, "version-id": version_id}],
    }


def applied_view(text: str, **kwargs: Any) -> CurrentView:
    [view] = project_of(text).views
    location = "file:///lake/warehouse/" + "/".join(view.name) + "/metadata/00001-view.gz.metadata.json"
    return current_view(view.name, location, view_metadata(text, **kwargs))
