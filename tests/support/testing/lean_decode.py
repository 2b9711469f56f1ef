"""Read a chat-completions request body for its ``model`` and ``messages`` only.

A ToolTalk request is ~14 kB, three quarters of it the tool schemas, which a scripted responder
never looks at; decoding them was the largest part of the fake server's CPU per request. The
provider puts ``model`` and ``messages`` first and the settings and tools after, and the settings
and tools are the same bytes call after call. So the members before ``messages`` are decoded one
by one, ``messages`` is decoded on its own, and the rest (the *tail*) is checked once, as text,
and then recognised by equality; a ``messages`` text the caller has seen before (equal text, equal
value) is recognised by equality too, between the members before it and a known tail.

The shortcut never changes an answer: it accepts exactly the bodies ``json.loads`` accepts as an
object with ``model`` and ``messages`` members, and gives the values ``json.loads`` would give
(duplicate members included: a tail that repeats ``model`` or ``messages`` is refused). For
anything else it returns None and the caller takes the full path.
"""

from __future__ import annotations

import json
from collections.abc import Container
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

_WS = " \t\n\r"  # JSON's whitespace (str.strip() would take more)
_decoder = json.JSONDecoder()  # configured as json.loads's own


class LeanDecoder:
    """Memos of the tails already checked, and of what each ``messages`` text decodes to."""

    MAX_TAILS = 64

    def __init__(self) -> None:
        self.tails: set[str] = set()  # tails that complete an object without model/messages

    def decode(self, raw: bytes, known: Container[str] = ()) -> tuple[Any, str, Any] | None:
        """``(model, messages text, messages)`` or None. The messages text is exact JSON:
        callers may memo on it (equal text, equal value). ``known``: messages texts this
        decoder returned before; when the text is one of them it is not decoded again and
        ``messages`` is None."""
        try:
            return self._decode(raw, known)
        except json.JSONDecodeError:  # e.g. an unterminated key
            return None

    def _decode(self, raw: bytes, known: Container[str]) -> tuple[Any, str, Any] | None:
        if raw[:1] != b"{" or b"\x00" in raw[:4]:
            return None  # not UTF-8 as json.loads would detect it, or leading whitespace
        try:
            s = raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return None
        n = len(s)
        pos = 1
        model: Any = None
        has_model = False
        while True:
            while pos < n and s[pos] in _WS:
                pos += 1
            if pos >= n or s[pos] != '"':
                return None
            key, pos = scanstring(s, pos + 1)
            while pos < n and s[pos] in _WS:
                pos += 1
            if pos >= n or s[pos] != ":":
                return None
            pos += 1
            while pos < n and s[pos] in _WS:
                pos += 1
            if key == "messages" and has_model and known:
                # a text returned before is a whole JSON value; followed by a checked tail
                # it is exactly what json.loads would read there
                for tail in self.tails:
                    if s.endswith(tail) and n - len(tail) > pos:
                        text = s[pos:n - len(tail)]
                        if text in known:
                            return model, text, None
            value, end = _decoder.raw_decode(s, pos)
            if key == "messages":
                if not has_model or not self._is_tail(s[end:]):
                    return None
                return model, s[pos:end], value
            if key == "model":
                model, has_model = value, True
            pos = end
            while pos < n and s[pos] in _WS:
                pos += 1
            if pos >= n or s[pos] != ",":
                return None
            pos += 1

    def _is_tail(self, tail: str) -> bool:
        """Whether ``tail`` ends the object (after ``messages``) without another ``model`` or
        ``messages`` member, as ``json.loads`` would read it."""
        if tail in self.tails:
            return True
        t = tail.lstrip(_WS)
        if t.startswith("}"):
            ok = not t[1:].strip(_WS)
        elif t.startswith(",") and t[1:].lstrip(_WS).startswith('"'):
            try:
                rest = json.loads("{" + t[1:])
            except json.JSONDecodeError:
                return False
            ok = "model" not in rest and "messages" not in rest
        else:
            ok = False
        if ok:
            if len(self.tails) >= self.MAX_TAILS:
                self.tails.clear()
            self.tails.add(tail)
        return ok
