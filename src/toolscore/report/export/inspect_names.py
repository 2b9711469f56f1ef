"""Sample ids as names of members of an Inspect ``.eval`` archive.

Inspect stores a sample as the member ``samples/<id>_epoch_<epoch>.json`` and finds it again
by rebuilding that name from the sample's id (its viewer when a sample is opened,
``read_eval_log_sample``). A sample id is whatever a dataset says, and a name such as
``samples/../../x_epoch_1.json`` or ``samples//etc/x_epoch_1.json`` makes an extractor write
outside the folder it was given. So an id that could not safely be part of a file path is
replaced, in the exported sample itself, by one that can (the original stays in the sample's
metadata as ``toolscore_id``); the member name is then still Inspect's own rule applied to the
sample's id, and every reader finds it.

Kept as they are: ids of ``[A-Za-z0-9_-]`` segments (dots inside) joined by ``/``, at most
:data:`MAX_ID` characters, no segment an MS-DOS device name (``G1_category/1187``, ``5``,
``AddAlarm-easy``: every dataset toolscore knows). Any other id becomes
``<readable part>~<128 bits of its SHA-256>``. Two different ids never share a name: a kept id
has no ``~``, a replaced one has exactly one, followed by the digest of the original id; and
the archive writer refuses a name it has already written rather than overwrite it.
"""

from __future__ import annotations

import hashlib
import re

MAX_ID = 100  # characters of an id kept as it is; a replaced one has at most 73
MAX_MEMBER = 160  # characters of a sample member's name (Inspect's ids are far shorter)
_SEGMENT = re.compile(r"[A-Za-z0-9_-](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?")
_DEVICES = re.compile(r"(?i)(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?")
_READABLE = re.compile(r"[^A-Za-z0-9_-]+")


def kept(sample_id: str) -> bool:
    """Whether ``sample_id`` can be part of a file path as it is (see the module's rules)."""
    if not 0 < len(sample_id) <= MAX_ID:
        return False
    segments = sample_id.split("/")
    return all(_SEGMENT.fullmatch(s) for s in segments) and not any(
        _DEVICES.fullmatch(s) for s in segments[:-1])


def inspect_id(sample_id: str) -> str:
    """The id of the exported sample: ``sample_id`` itself when :func:`kept`, else a
    readable part and a digest that no other id maps to."""
    if kept(sample_id):
        return sample_id
    readable = _READABLE.sub("_", sample_id)[:40] or "id"
    digest = hashlib.sha256(sample_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{readable}~{digest}"


def member_problem(name: str) -> str | None:
    """Why ``name`` is not a safe member name of an archive (None when it is): an absolute
    path, a backslash, a drive, a control character, an empty, ``.`` or ``..`` segment, or
    a name longer than :data:`MAX_MEMBER`."""
    if not 0 < len(name) <= MAX_MEMBER:
        return f"{len(name)} characters (1 to {MAX_MEMBER})"
    if name.startswith("/"):
        return "an absolute path"
    bad = next((c for c in name if c in "\\:" or ord(c) < 32 or 127 <= ord(c) < 160
                or not c.isprintable()), None)
    if bad is not None:
        return f"the character {bad!r}"
    if any(s in ("", ".", "..") for s in name.split("/")):
        return "an empty, '.' or '..' segment"
    return None


def sample_member(sample_id: str, epoch: int) -> str:
    """Inspect's member name for the sample ``(sample_id, epoch)``; a ValueError when it is
    not safe (a sample whose id did not come from :func:`inspect_id`)."""
    name = f"samples/{sample_id}_epoch_{int(epoch)}.json"
    problem = member_problem(name)
    if problem is not None:
        raise ValueError(f"sample id {sample_id[:60]!r}: not a safe archive member name "
                         f"({problem})")
    return name
