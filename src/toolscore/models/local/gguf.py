"""Read the metadata of a GGUF weights file without loading the model.

The embedded model must be prompted with its own chat template, which lives in the GGUF header
(``tokenizer.chat_template``). Reading the header directly lets the prompt be rendered, shown
and tested without llama.cpp or its seconds of start-up, and lets the template itself be part of
the response cache's identity. Only the header is parsed (format versions 2 and 3); tensors are
never touched.
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path
from typing import Any

MAGIC = b"GGUF"
# value type id -> struct format of a scalar (8 = string and 9 = array are handled apart)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    """The file is not a GGUF file this reader understands."""


class _Reader:
    def __init__(self, buf: Any, path: Path):
        self.buf, self.pos, self.path = buf, 0, path

    def unpack(self, fmt: str) -> Any:
        try:
            (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        except struct.error:
            raise GGUFError(f"{self.path}: truncated GGUF header at byte {self.pos}") from None
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        n = self.unpack("<Q")
        raw = bytes(self.buf[self.pos:self.pos + n])
        if len(raw) != n:
            raise GGUFError(f"{self.path}: truncated GGUF header at byte {self.pos}")
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def value(self, kind: int, keep: bool) -> Any:
        """One value of type ``kind``; arrays are skipped (returned as None) unless ``keep``."""
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item, count = self.unpack("<I"), self.unpack("<Q")
            if item in _SCALARS and not keep:  # fixed width: jump over it
                self.pos += count * struct.calcsize(_SCALARS[item])
                return None
            if item == _STRING and not keep:  # e.g. the vocabulary: skip without decoding
                for _ in range(count):
                    self.pos += 8 + struct.unpack_from("<Q", self.buf, self.pos)[0]
                return None
            values = [self.value(item, keep) for _ in range(count)]
            return values if keep else None
        raise GGUFError(f"{self.path}: unknown GGUF value type {kind} at byte {self.pos}")


def read_metadata(path: str | Path, keys: set[str] | None = None) -> dict[str, Any]:
    """The header's key/value pairs: all of them, or only ``keys`` (the others are skipped
    without being decoded, which matters for the 49k-entry vocabulary)."""
    path = Path(path)
    if path.stat().st_size < 24:
        raise GGUFError(f"{path}: not a GGUF file (too short)")
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        r = _Reader(buf, path)
        if bytes(buf[:4]) != MAGIC:
            raise GGUFError(f"{path}: not a GGUF file (no GGUF magic number)")
        r.pos = 4
        version = r.unpack("<I")
        if version not in (2, 3):
            raise GGUFError(f"{path}: GGUF version {version} is not supported (2 or 3)")
        r.unpack("<Q")  # tensor count
        out: dict[str, Any] = {}
        for _ in range(r.unpack("<Q")):
            key = r.string()
            wanted = keys is None or key in keys
            value = r.value(r.unpack("<I"), keep=wanted)
            if wanted:
                out[key] = value
        return out
