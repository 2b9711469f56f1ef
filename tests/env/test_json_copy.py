"""``json_copy``: what a tool hands back of its rows is equal to them and shares nothing
mutable with them, whatever they hold."""

from __future__ import annotations

from datetime import datetime

from toolscore.env.tool import json_copy


def test_a_copy_is_equal_and_independent() -> None:
    row = {"id": "e1", "attendees": ["ann", {"name": "bo", "tags": [1, 2.5, None, True]}],
           "when": datetime(2023, 5, 1), "span": (1, [2])}
    copied = json_copy(row)
    assert copied == row
    copied["attendees"][1]["tags"].append(3)
    copied["attendees"].append("cy")
    copied["span"][1].append(9)  # not JSON-shaped: deep-copied the usual way
    assert row["attendees"] == ["ann", {"name": "bo", "tags": [1, 2.5, None, True]}]
    assert row["span"] == (1, [2]) and copied["when"] == row["when"]
