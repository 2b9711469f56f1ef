"""Ways to break a file, as functions of its bytes (or of its parsed JSON), so the same breakage
can be applied to every input the commands read.

Each returns the new bytes, or ``None`` when the breakage does not apply to that file (a Latin-1
re-encoding of pure ASCII text changes nothing). The broken bytes are deterministic: a corpus
that changes between runs could not pin an outcome to each variant.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

BOM = b"\xef\xbb\xbf"
Mutation = Callable[[bytes], "bytes | None"]


def empty(data: bytes) -> bytes:
    return b""


def torn(data: bytes) -> bytes:
    """Cut in the middle of the last third: a JSON document without its end."""
    cut = max(1, len(data) * 2 // 3)
    while cut > 1 and data[cut - 1:cut] in (b"\n", b"}", b"]"):
        cut -= 1  # never a whole line or document by chance
    return data[:cut]


def bad_utf8(data: bytes) -> bytes:
    """Invalid UTF-8 bytes (0xff never occurs in UTF-8) half-way through a line."""
    i = len(data) // 2
    while i < len(data) and data[i:i + 1] in (b"\n", b"\r", b'"', b","):
        i += 1
    return data[:i] + b"\xff\xfe" + data[i:]


def utf16(data: bytes) -> bytes:
    return data.decode("utf-8").encode("utf-16")


def latin1(data: bytes) -> bytes | None:
    """The text saved as Latin-1: any non-ASCII character becomes a byte that is not UTF-8."""
    text = data.decode("utf-8")
    if text.isascii():
        return None
    return text.encode("latin-1", errors="replace")


def bom(data: bytes) -> bytes:
    return BOM + data


def binary(data: bytes) -> bytes:
    """Random bytes with line ends (a file without one is a torn first line to the run store)."""
    rnd = random.Random(7)
    return b"\n".join(bytes(rnd.randrange(256) for _ in range(200)) for _ in range(4)) + b"\n"


def crlf(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def not_a_zip(data: bytes) -> bytes:
    return b"PK\x03\x04 this is not really a zip archive\n" * 4


BYTES: dict[str, Mutation] = {
    "empty": empty, "torn": torn, "bad-utf8": bad_utf8, "utf16": utf16, "latin1": latin1,
    "binary": binary,
}


def json_bytes(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8")


def jsonl_bytes(docs: list[Any]) -> bytes:
    return b"".join(json.dumps(d, ensure_ascii=False).encode("utf-8") + b"\n" for d in docs)


# Whole documents that are valid JSON of the wrong top-level type.
WRONG_TOP: dict[str, Any] = {"list": [], "string": "text", "number": 42, "null": None}
