"""One rewrite serves many requests (compiler/erasure/batching.py): a table whose requests are all held waits; once
one is due (deadline minus lifecycle.erasure.batch_margin), every pending request of the table is erased with it;
none is ever late for being held. Days are fixed dates, never the clock."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from tablepolicy.compiler.erasure.batching import batched, runs_on
from tablepolicy.compiler.erasure.ledger import Entry, State, statuses
from tablepolicy.compiler.erasure.plan import Subject, TableErasure
from tablepolicy.compiler.render.erasure_report import render_status

DAY0 = date(2026, 11, 1)
SLA = timedelta(days=30)


def table(margin: int | None, *arrivals: int, deadlines: dict[int, int] | None = None) -> TableErasure:
    """Requests REQ-<day> received on DAY0 + day; ``deadlines``: a request's own earlier deadline (day)."""
    own = deadlines or {}
    subjects = tuple(Subject(f"REQ-{d}", (f"u{d}",), DAY0 + timedelta(days=own.get(d, d + 30))) for d in arrivals)
    return TableErasure(("a", "t"), (("user_id",),), subjects, (),
                        None if margin is None else timedelta(days=margin))


@pytest.mark.parametrize(("margin", "arrivals", "today", "due", "joined"), [
    (None, (0, 3), 3, ("REQ-0", "REQ-3"), ()),  # no margin: every request on the next run
    (1, (0, 3), 3, None, None),  # held: REQ-0 runs on day 29
    (1, (0, 3, 29), 29, ("REQ-0",), ("REQ-29", "REQ-3")),  # day 29: one rewrite for all three
    (1, (0, 3), 40, ("REQ-0", "REQ-3"), ()),  # a run that comes late erases everything due
    (5, (0, 10), 25, ("REQ-0",), ("REQ-10",)),
    (30, (4,), 4, ("REQ-4",), ()),  # a margin as long as the SLA: at once
], ids=["no-margin", "held", "batched", "late-run", "margin-5d", "margin-equals-sla"])
def test_a_table_runs_when_one_request_is_due_and_takes_all_its_requests(
        margin: int | None, arrivals: tuple[int, ...], today: int, due: tuple[str, ...] | None,
        joined: tuple[str, ...] | None) -> None:
    found = batched([table(margin, *arrivals)], DAY0 + timedelta(days=today))
    if due is None:
        assert found.run == [] and [t.table for t in found.held] == [("a", "t")]
        assert found.next_run(found.held[0]) == DAY0 + timedelta(days=29)
        return
    assert found.held == [] and [len(t.subjects) for t in found.run] == [len(arrivals)]
    [batch] = found.batches
    assert (batch.due, batch.joined) == (due, joined)


def test_a_request_closer_to_its_deadline_than_the_margin_runs_at_once() -> None:
    held = table(7, 10, deadlines={10: 12})  # its own deadline two days after it arrived, inside the 7-day margin
    found = batched([held], DAY0 + timedelta(days=10))
    assert [b.due for b in found.batches] == [("REQ-10",)]


def test_no_request_is_late_in_thirty_days_of_daily_runs() -> None:
    """30 requests one a day, a run every day until all are done: each is erased on or before its deadline, and
    with a 1-day margin all thirty go in one run."""
    pending = list(range(30))
    erased: dict[str, date] = {}
    runs = 0
    for day in range(70):
        today = DAY0 + timedelta(days=day)
        arrived = [d for d in pending if d <= day]
        if not arrived:
            continue
        found = batched([table(1, *arrived)], today)
        for t in found.run:
            runs += 1
            for s in t.subjects:
                erased[s.request] = today
                pending.remove(int(s.request.split("-")[1]))
    assert runs == 1 and len(erased) == 30
    assert all(when <= DAY0 + timedelta(days=int(r.split("-")[1]) + 30) for r, when in erased.items())


def test_status_shows_when_a_held_request_runs_and_its_deadline() -> None:
    t = table(1, 0)
    [subject] = t.subjects
    entry = Entry("REQ-0", "a.t", DAY0, subject.deadline, State.PENDING, runs_on=runs_on(subject, t))
    text = render_status(statuses([entry]), DAY0 + timedelta(days=2), lambda s, _c: s)
    assert "REQ-0  pending  received 2026-11-01, deadline 2026-12-01, runs on 2026-11-30" in text
    assert "a.t: pending (held for batching: runs on 2026-11-30)" in text
    due = render_status(statuses([entry]), DAY0 + timedelta(days=29), lambda s, _c: s)
    assert "runs on the next erase" in due
