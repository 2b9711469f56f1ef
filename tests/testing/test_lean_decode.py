"""LeanDecoder reads ``model`` and ``messages`` exactly as ``json.loads`` would, or declines."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from support.testing.lean_decode import LeanDecoder

SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
KEYS = st.sampled_from(["model", "messages", "tools", "seed", "temperature", 'mess"ages'])
SPACE = st.sampled_from(["", " ", "\n", "\t ", "\r\n"])


def test_the_providers_layout_is_read() -> None:
    messages = [{"role": "user", "content": "hi \u00e9 \\\" there"}]
    raw = json.dumps({"model": "m", "messages": messages, "temperature": 0.0,
                      "tools": [{"type": "function"}]}, ensure_ascii=False,
                     separators=(",", ":")).encode()
    dec = LeanDecoder()
    model, text, value = dec.decode(raw) or (None, "", None)
    assert (model, value, json.loads(text)) == ("m", messages, messages)
    assert dec.decode(raw) is not None and len(dec.tails) == 1  # the tail, checked once


def test_declines_what_it_does_not_read() -> None:
    dec = LeanDecoder()
    for raw in [b' {"model":"m","messages":[]}', b'\xef\xbb\xbf{"model":"m","messages":[]}',
                b'{"model":"m","messages":[],}', b'{"model":"m","messages":[]', b"{}",
                b'{"model":"m","messages":[]}x', b'{"model":"m","messages":[],"model":"n"}',
                b'{"model":"\xff","messages":[]}', b'{"model":"m","messages":[] ,"a":[1,]}',
                '{"model":"m","messages":[]}'.encode("utf-16")]:
        assert dec.decode(raw) is None, raw


MEMBERS = st.lists(st.tuples(KEYS, VALUES), max_size=2)


@settings(max_examples=300, deadline=None)
@given(before=MEMBERS, model=VALUES, middle=MEMBERS, messages=VALUES, after=MEMBERS,
       spaces=st.lists(SPACE, min_size=4, max_size=4),
       junk=st.sampled_from(["", "", "", ",", "]", "}", " x", " "]))
def test_agrees_with_json_loads(before: list[tuple[str, Any]], model: Any,
                                middle: list[tuple[str, Any]], messages: Any,
                                after: list[tuple[str, Any]], spaces: list[str],
                                junk: str) -> None:
    """Any object (duplicate members, whitespace, trailing junk): read as json.loads reads it,
    or declined; and the provider's order without duplicates is always read."""
    a, b, c, d = spaces
    members = [*before, ("model", model), *middle, ("messages", messages), *after]
    text = "{" + ",".join(f"{a}{json.dumps(k)}{b}:{c}{json.dumps(v)}{d}"
                          for k, v in members) + "}" + junk
    raw = text.encode()
    dec = LeanDecoder()
    got = dec.decode(raw)
    plain = (junk.strip() == "" and all(k != "messages" for k, _ in before)
             and all(k not in ("model", "messages") for k, _ in [*middle, *after]))
    if got is None:
        assert not plain
        return
    whole = json.loads(raw)  # raises if the decoder accepted something json.loads does not
    assert got[0] == whole["model"]
    assert got[2] == whole["messages"] == json.loads(got[1])
    assert dec.decode(raw, {got[1]}) == (got[0], got[1], None)  # a known text: not decoded


def test_a_known_messages_text_is_only_taken_whole() -> None:
    dec = LeanDecoder()
    first = b'{"model":"m","messages":[1],"x":[1]}'
    assert dec.decode(first) == ("m", "[1]", [1])
    known = {"[1]"}
    assert dec.decode(first, known) == ("m", "[1]", None)
    longer = b'{"model":"m","messages":[1],"x":[1],"x":[1]}'  # ends with the known tail
    assert dec.decode(longer, known) == ("m", "[1]", [1])  # decoded: "[1],"x":[1]" is no value
    other = b'{"model":"n","messages":[2],"x":[1]}'
    assert dec.decode(other, known) == ("n", "[2]", [2])
    assert dec.decode(b'{"model":"m","messages":[1],"x":[1]]}', known) is None
