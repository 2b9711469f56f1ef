"""Text from models and endpoints, made safe to show: it is data, so a terminal, a log, a
spreadsheet or a browser must display it, never obey it.

Bottom layer: the report (tables, HTML, exports), the CLI's error lines and the model layer's
warnings all use the same rule.
"""

from __future__ import annotations

import logging
from typing import Any

# Characters that act instead of showing: C0/C1 controls (ESC starts terminal sequences that
# move the cursor, rewrite the title or hide text), DEL, and the bidirectional overrides and
# isolates that reorder what a reader sees (a "Trojan Source" display). Newlines and tabs stay.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_ACTIVE = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]
           if chr(c) not in "\n\t"}
_ACTIVE.update({ord(ch): f"\\u{ord(ch):04x}" for ch in _BIDI})


def printable(value: Any) -> Any:
    """``value`` with every control, escape and bidi character shown as its ``\\xNN`` or
    ``\\uNNNN`` text. Non-strings pass through unchanged."""
    return value.translate(_ACTIVE) if isinstance(value, str) else value


class PrintableFilter(logging.Filter):
    """Formats a record's message once and neutralises it: a warning that quotes an endpoint's
    error body must not reach stderr with its escape sequences."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = printable(record.getMessage())
        record.args = None
        return True


def safe_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with :class:`PrintableFilter` attached (once)."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, PrintableFilter) for f in logger.filters):
        logger.addFilter(PrintableFilter())
    return logger
