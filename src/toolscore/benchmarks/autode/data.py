"""Loading AutoDE's released data: user scripts and recorded result files (the API documents
are in :mod:`.apidocs`).

Everything is validated while loading, because a misread gold slot or a silently skipped trial
changes every score computed from it: bad input raises ``DataError`` with one line naming the
file, the line (or spreadsheet row) and the field.

Result files store one line per trial and several trials per uuid one after another, with no
trial number (``trial_uuid`` names a batch of runs, not a trial). :func:`group_trials` therefore
delimits trials the way the reference scorer does: group by uuid in file order, take the smallest
number of records any uuid has as the number of trials T, and let trial t be every uuid's t-th
record. Extra records (a uuid that was retried) are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, cast

from toolscore.data import DataError, iter_jsonl
from toolscore.types import Message

SlotValue = str | bool
Role = Literal["User", "Assistant"]
BACKGROUND_FIELDS = ("Character", "Background", "Purpose")
SCRIPTS_FILE = "data_v1_2.jsonl"


@dataclass(frozen=True)
class Turn:
    """One message of a dialogue history, with the dataset's role names."""

    role: Role
    message: str

    def to_message(self) -> Message:
        """The turn in the transcript vocabulary (User -> user, Assistant -> assistant)."""
        return Message(role="user" if self.role == "User" else "assistant", content=self.message)


@dataclass(frozen=True)
class UserScript:
    """A test case: who the user is and what they want, plus the gold API call.

    ``content`` is the static dialogue history (it starts and ends with the user; ``content[0]``
    is the initial query that every protocol begins with).
    """

    uuid: str
    character: str
    background: str
    purpose: str
    content: tuple[Turn, ...]
    api: str
    slots: dict[str, SlotValue]
    line: int = 0
    # the ``background`` field as released: the reference's user agent is shown it verbatim
    background_text: str = field(default="", compare=False)

    @property
    def initial_query(self) -> str:
        return self.content[0].message


@dataclass(frozen=True)
class TrialRecord:
    """One recorded trial. ``state``, ``reason`` and ``trial_uuid`` are None in legacy files."""

    uuid: str
    background: str
    content: tuple[Turn, ...]
    api: str
    slots: dict[str, Any]
    state: Literal["success", "failure"] | None = None
    reason: str | None = None
    trial_uuid: str | None = None
    line: int = 0


@dataclass
class ResultFile:
    """A recorded run: its records in file order."""

    path: Path
    records: list[TrialRecord] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.stem


# -- helpers ---------------------------------------------------------------------------------------
def _string(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise DataError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    return value


def _turns(obj: dict[str, Any], where: str,
           interned: dict[tuple[str, str], Turn] | None = None) -> tuple[Turn, ...]:
    """The ``content`` messages as turns. ``interned`` (Turn by (role, message)) lets the
    records of one file share the Turn of a message they repeat (a static run holds the
    same history in every trial) instead of building it again."""
    value = obj.get("content")
    if not isinstance(value, list):
        raise DataError(f"{where}: field 'content' must be a list of messages")
    if interned is None:
        interned = {}
    turns = []
    for i, m in enumerate(value):
        if not isinstance(m, dict) or m.get("role") not in ("User", "Assistant"):
            raise DataError(f"{where}: field 'content[{i}].role' must be 'User' or 'Assistant'")
        message = m.get("message")
        if not isinstance(message, str):
            raise DataError(f"{where}: field 'content[{i}].message' must be a string")
        key = (m["role"], message)
        turn = interned.get(key)
        if turn is None:
            turn = interned[key] = Turn(*key)
        turns.append(turn)
    return tuple(turns)


def _slots(obj: dict[str, Any], where: str, *, gold: bool) -> dict[str, Any]:
    value = obj.get("slots")
    if not isinstance(value, dict):
        raise DataError(f"{where}: field 'slots' must be an object")
    if gold:
        for k, v in value.items():
            if not isinstance(v, (str, bool)):
                raise DataError(f"{where}: field 'slots.{k}' must be a string or boolean")
    return dict(value)


def parse_background(text: str, where: str) -> tuple[str, str, str]:
    """Split the three ``Character: / Background: / Purpose:`` lines of a user script."""
    lines = [line for line in text.split("\n") if line.strip()]
    values: list[str] = []
    for name, line in zip(BACKGROUND_FIELDS, lines, strict=False):
        prefix = f"{name}:"
        if not line.startswith(prefix):
            raise DataError(f"{where}: field 'background' line {len(values) + 1} must start "
                            f"with {prefix!r}")
        values.append(line[len(prefix):].strip())
    if len(lines) != len(BACKGROUND_FIELDS):
        raise DataError(f"{where}: field 'background' must have 3 lines (Character, Background, "
                        f"Purpose), got {len(lines)}")
    return values[0], values[1], values[2]


# -- user scripts ----------------------------------------------------------------------------------
def scripts_path(root: Path) -> Path:
    """``root`` may be the dataset folder or the scripts file itself."""
    root = Path(root)
    return root / SCRIPTS_FILE if root.is_dir() else root


def load_scripts(root: Path) -> list[UserScript]:
    """The user scripts in file order; uuids must be unique and histories start/end with User."""
    path = scripts_path(root)
    scripts: list[UserScript] = []
    seen: dict[str, int] = {}
    for number, obj in iter_jsonl(path):
        where = f"{path}:{number}"
        uuid = _string(obj, "uuid", where)
        if uuid in seen:
            raise DataError(f"{where}: field 'uuid' {uuid!r} repeats line {seen[uuid]}")
        seen[uuid] = number
        background_text = _string(obj, "background", where)
        character, background, purpose = parse_background(background_text, where)
        content = _turns(obj, where)
        if not content or content[0].role != "User" or content[-1].role != "User":
            raise DataError(f"{where}: field 'content' must start and end with a User message")
        scripts.append(UserScript(uuid, character, background, purpose, content,
                                  _string(obj, "api", where),
                                  _slots(obj, where, gold=True), number, background_text))
    if not scripts:
        raise DataError(f"{path}: no user scripts")
    return scripts


# -- recorded results ------------------------------------------------------------------------------
def load_results(path: Path) -> ResultFile:
    """A recorded result file; legacy lines without state/reason/trial_uuid are accepted."""
    path = Path(path)
    result = ResultFile(path)
    interned: dict[tuple[str, str], Turn] = {}
    for number, obj in iter_jsonl(path):
        fields = record_fields(obj)
        if fields is None:
            check_record(obj, f"{path}:{number}")
            raise AssertionError("check_record passed a record that record_fields refused")
        uuid, background, api, flat, slots, state, reason, trial_uuid = fields
        turns = []
        for key in zip(flat[::2], flat[1::2], strict=True):
            turn = interned.get(key)
            if turn is None:
                # record_fields let only the two roles through
                turn = interned[key] = Turn(cast(Role, key[0]), key[1])
            turns.append(turn)
        result.records.append(TrialRecord(uuid=uuid, background=background,
                                          content=tuple(turns), api=api, slots=dict(slots),
                                          state=state, reason=reason, trial_uuid=trial_uuid,
                                          line=number))
    if not result.records:
        raise DataError(f"{path}: no records")
    return result


RecordFields = tuple[str, str, str, tuple[str, ...], dict[str, Any], Any, Any, Any]


def record_fields(obj: dict[str, Any]) -> RecordFields | None:
    """(uuid, background, api, content, slots, state, reason, trial_uuid) of a result line
    whose fields are all well-formed, ``content`` flattened to (role, message, role, message,
    ...); None otherwise (then :func:`check_record` names the first bad field). Rescoring
    reads 14,000 records: the common case is checked in one pass, with no error text
    prepared, and builds nothing but the flat tuple (a cheap key for a dialogue)."""
    get = obj.get
    uuid, background, api, content, slots = (get("uuid"), get("background"), get("api"),
                                             get("content"), get("slots"))
    state, reason, trial_uuid = get("state"), get("reason"), get("trial_uuid")
    if not (type(uuid) is str and type(background) is str and type(api) is str
            and type(content) is list and type(slots) is dict
            and state in (None, "success", "failure")
            and (reason is None or type(reason) is str)
            and (trial_uuid is None or type(trial_uuid) is str)):
        return None
    flat: list[str] = []
    for m in content:
        if type(m) is not dict:
            return None
        role, message = m.get("role"), m.get("message")
        if (role != "User" and role != "Assistant") or type(message) is not str:
            return None
        flat += (role, message)
    return uuid, background, api, tuple(flat), slots, state, reason, trial_uuid


def check_record(obj: dict[str, Any], where: str) -> None:
    """Raise the one-line error of a result line's first bad field, checking field by field
    in file-format order (called for the lines :func:`record_fields` refuses)."""
    state = obj.get("state")
    if state not in (None, "success", "failure"):
        raise DataError(f"{where}: field 'state' must be 'success' or 'failure', got "
                        f"{state!r}")
    for key in ("reason", "trial_uuid"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise DataError(f"{where}: field {key!r} must be a string")
    _string(obj, "uuid", where)
    _string(obj, "background", where)
    _turns(obj, where)
    _string(obj, "api", where)
    _slots(obj, where, gold=False)


class Keyed(Protocol):
    """A record as :func:`group_trials` reads it: a :class:`TrialRecord`, or rescoring's
    facts of one (:class:`.recorded.LineFacts`)."""

    @property
    def uuid(self) -> str: ...


R = TypeVar("R", bound=Keyed)


def group_trials(records: Sequence[R]) -> list[dict[str, R]]:
    """Trials as uuid -> record maps: T = fewest records of any uuid; trial t = each t-th record.

    A uuid's records need not be adjacent; only their order in the file matters.
    """
    by_uuid: dict[str, list[R]] = {}
    for record in records:
        by_uuid.setdefault(record.uuid, []).append(record)
    if not by_uuid:
        return []
    n_trials = min(len(v) for v in by_uuid.values())
    return [{uuid: recs[t] for uuid, recs in by_uuid.items()} for t in range(n_trials)]
