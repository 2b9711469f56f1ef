"""Hypothesis strategies shared by the property tests: the JSON values, argument texts and
tool calls a model (or a broken endpoint) can send, broken Unicode and pathological sizes
included."""

from __future__ import annotations

import json

from hypothesis import settings
from hypothesis import strategies as st

# Fast and deterministic: the same examples on every machine and every run.
FUZZ = settings(max_examples=300, deadline=None, derandomize=True, database=None)

# Any code point, lone surrogates (half an emoji from a truncated model) included.
any_char = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
texts = st.text(any_char, max_size=30)
scalars = (st.none() | st.booleans() | st.integers() | st.floats() | texts
           | st.sampled_from([10 ** 20, -0.0, float("inf"), "\ud83d", "\x1b[31m", "‮"]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(texts, inner, max_size=4), max_leaves=15)


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


argument_texts = st.one_of(
    texts,
    json_values.map(json.dumps),
    json_values.map(_dumps),
    st.dictionaries(texts, json_values, max_size=4).map(json.dumps),
    st.integers(0, 120_000).map(lambda n: '{"a": ' + "[" * n + "]" * n + "}"),
    st.integers(4000, 6000).map(lambda n: '{"q": ' + "9" * n + "}"),
    st.sampled_from(['{"time": "\\ud83d"}', '{"a": NaN}', '{"a": Infinity}', "[]", "null",
                     '{"a": 1, "a": 2}', "\ufeff{}", "   ", '{"\\udc00": 1}']),
)
