"""Key values never reach a proof's error line (runtime/erase_run.py mask_value): each is masked where it stands
as a value, and a short word-like value is not masked inside identifiers, where it would garble the message."""

from __future__ import annotations

import pytest

from tablepolicy.runtime.erase_run import mask_value


@pytest.mark.parametrize(("text", "value", "shown"), [
    ("cannot cast vals.values_spark value _ here", "_", "cannot cast vals.values_spark value *** here"),
    ("key 'u1' not u12", "u1", "key '***' not u12"),
    ("key=u1,other", "u1", "key=***,other"),
    ("failed on x' OR '1'='1 now", "x' OR '1'='1", "failed on *** now"),
    ("100% sure: 1%", "1%", "100% sure: ***"),  # not word-like: masked wherever it occurs
    ("Übermut in Übermut2", "Übermut", "*** in Übermut2"),
], ids=str)
def test_a_key_value_is_masked_where_it_stands_as_a_value(text: str, value: str, shown: str) -> None:
    assert mask_value(text, value) == shown
