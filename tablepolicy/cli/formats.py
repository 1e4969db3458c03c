"""The output formats each command's ``--format`` offers: closed sets handed from the flags to the output as
members (``match`` ... ``assert_never``), never as bare strings. StrEnums, so a member prints as its value."""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    """plan and maintain: the terminal, a pull-request comment or ticket, JSON for CD."""

    text = "text"
    markdown = "markdown"
    json = "json"


class FindingsFormat(StrEnum):
    """validate: the terminal, GitHub annotations (followed by the terminal form), JSON."""

    text = "text"
    github = "github"
    json = "json"


class StatusFormat(StrEnum):
    """erase status."""

    text = "text"
    json = "json"


class HealthFormat(StrEnum):
    """health: the terminal, JSON, the Prometheus text exposition format (node_exporter's textfile collector,
    a pushgateway)."""

    text = "text"
    json = "json"
    prometheus = "prometheus"


class DoctorFormat(StrEnum):
    """doctor."""

    text = "text"
    json = "json"


class DriftFormat(StrEnum):
    """drift."""

    text = "text"
    json = "json"
