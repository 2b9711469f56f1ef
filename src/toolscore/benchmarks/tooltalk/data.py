"""Loading ToolTalk's released data: conversations, databases and each conversation's world.

The dataset folder holds ``databases/*.json`` (one JSON object per database, named by file
stem), ``easy/*.json`` (28 single-call conversations) and ``tooltalk/*.json`` (50 hard ones).
Everything is validated while loading, because a silently skipped or misread ground-truth call
would change every score computed from it: a bad file raises ``DataError`` with one line naming
the file, the record and the field. The turns' ``index`` field is unreliable and ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from toolscore.data import DataError, read_text
from toolscore.env.environment import Environment, Session, Snapshot
from toolscore.env.plugin import Plugin
from toolscore.env.tool import CallRecord

Split = Literal["easy", "hard", "all"]
SPLIT_DIRS = {"easy": "easy", "hard": "tooltalk"}
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"
ACCOUNT_DB = "Account"


@dataclass
class Turn:
    """One turn of a conversation; ``apis`` are the ground-truth calls made before the reply."""

    role: Literal["user", "assistant"]
    text: str
    apis: list[CallRecord] = field(default_factory=list)


@dataclass
class Conversation:
    name: str
    conversation_id: str
    split: Literal["easy", "hard"]
    path: Path
    suites_used: list[str]
    apis_used: list[str]
    scenario: str | None
    user: dict[str, Any]
    metadata: dict[str, Any]
    turns: list[Turn]

    @cached_property
    def now(self) -> datetime:
        """The simulated "now" of the conversation (``metadata.timestamp``), parsed once."""
        return datetime.strptime(self.metadata["timestamp"], TIMESTAMP_FORMAT)

    @property
    def calls(self) -> list[CallRecord]:
        """All ground-truth calls, in file order."""
        return [call for turn in self.turns for call in turn.apis]


# -- loading --------------------------------------------------------------------------------------
def load_conversations(root: Path, split: Split = "all") -> list[Conversation]:
    """The conversations of a split ("easy", "hard" or "all" = easy then hard), by file name."""
    root = Path(root)
    if split not in ("easy", "hard", "all"):
        raise DataError(f"{root}: unknown split {split!r} (expected easy, hard or all)")
    chosen = ["easy", "hard"] if split == "all" else [split]
    conversations = []
    for name in chosen:
        folder = root / SPLIT_DIRS[name]
        if not folder.is_dir():
            raise DataError(f"{folder}: missing ToolTalk {name} folder")
        for path in sorted(folder.glob("*.json"), key=lambda p: p.name):
            conversations.append(_conversation(path, _label(root, path), name))  # type: ignore[arg-type]
    return conversations


def load_databases(root: Path) -> dict[str, Any]:
    """The initial databases, keyed by file stem (Account, Alarm, Calendar, ...)."""
    root = Path(root)
    folder = root / "databases"
    if not folder.is_dir():
        raise DataError(f"{folder}: missing ToolTalk databases folder")
    databases = {}
    for path in sorted(folder.glob("*.json")):
        data = _read_json(path, _label(root, path))
        if not isinstance(data, dict):
            raise DataError(f"{_label(root, path)}: expected a JSON object")
        for key, table in data.items():  # every database is keyed by user, then by record
            if not isinstance(table, dict):
                raise DataError(f"{_label(root, path)}: {key!r}: expected an object, got "
                                f"{type(table).__name__}")
        databases[path.stem] = data
    return databases


def require_databases(root: Path, databases: dict[str, Any], plugins: list[Plugin]) -> None:
    """Every database the plugins name is in ``databases``: checked before the first model
    call, so a missing file is one line, not an error in every sample."""
    for plugin in plugins:
        for name in plugin.databases:
            if name not in databases:
                raise DataError(f"{_label(Path(root), Path(root) / 'databases' / (name + '.json'))}"
                                f": missing (plugin {plugin.name} keeps its state there)")


def make_environment(conversation: Conversation, databases: dict[str, Any],
                     plugins: list[Plugin] | None = None) -> Environment:
    """The simulated world of one conversation, set as the state ``reset()`` returns to.

    The clock is the conversation's timestamp. A ``user.session_token`` logs the user in with
    that token (written into the Account database); a ``user.verification_code`` is stored for
    the user, as if SendVerificationCode had sent it.
    """
    if plugins is None:
        from toolscore.benchmarks.tooltalk.plugins import PLUGINS

        plugins = PLUGINS
    snapshot = dataset_snapshot(databases)
    user = conversation.user
    username = user["username"]
    session = None
    token, code = user.get("session_token"), user.get("verification_code")
    if token is not None or code is not None:
        accounts = snapshot.load(ACCOUNT_DB) if ACCOUNT_DB in snapshot.blobs else {}
        account = accounts.get(username)
        if not isinstance(account, dict):
            raise DataError(f"{conversation.path.parent.name}/{conversation.path.name}: "
                            f"user.username: {username!r} has no account in the {ACCOUNT_DB} "
                            "database")
        if token is not None:
            account["session_token"] = token
            session = Session(username, token)
        if code is not None:
            account["verification_code"] = code
        snapshot = snapshot.replace({ACCOUNT_DB: accounts})
    env = Environment(plugins, now=conversation.now)
    env.set_initial(snapshot, session)
    return env


# The snapshot of the last databases given, kept with them: every conversation of a dataset
# starts from the same databases, so they are pickled (and hashed) once, not once per sample.
# The loaded databases are read, never written (worlds are built from the snapshot), so the
# object's identity is its content; holding it keeps the identity from being reused.
_LAST_SNAPSHOT: list[tuple[dict[str, Any], Snapshot]] = []


def dataset_snapshot(databases: dict[str, Any]) -> Snapshot:
    """The shared :class:`Snapshot` of a dataset's initial databases."""
    if _LAST_SNAPSHOT and _LAST_SNAPSHOT[0][0] is databases:
        return _LAST_SNAPSHOT[0][1]
    snapshot = Snapshot(databases)
    _LAST_SNAPSHOT[:] = [(databases, snapshot)]
    return snapshot


# -- validation -----------------------------------------------------------------------------------
def _label(root: Path, path: Path) -> str:
    """How a file is named in error messages: relative to the dataset's parent folder."""
    try:
        return str(Path(root.name) / path.relative_to(root))
    except ValueError:
        return str(path)


def _read_json(path: Path, label: str) -> Any:
    text = read_text(path, label)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"{label}: invalid JSON at line {e.lineno}: {e.msg}") from None


def _need(record: dict[str, Any], key: str, types: type | tuple[type, ...], label: str,
          path: str = "", optional: bool = False) -> Any:
    """``record[key]`` checked against ``types``; errors name the file and the record path."""
    if key not in record or (optional and record[key] is None):
        if optional:
            return None
        raise DataError(f"{label}: {path + ': ' if path else ''}missing {key!r}")
    value = record[key]
    if not isinstance(value, types):
        expected = " or ".join(t.__name__ for t in _tuple(types))
        field_path = f"{path}.{key}" if path else key
        raise DataError(f"{label}: {field_path}: expected {expected}, "
                        f"got {type(value).__name__}")
    return value


def _tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _string_list(record: dict[str, Any], key: str, label: str) -> list[str]:
    values = _need(record, key, list, label, optional=True) or []
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise DataError(f"{label}: {key}[{i}]: expected str, got {type(value).__name__}")
    return list(values)


def _conversation(path: Path, label: str, split: Literal["easy", "hard"]) -> Conversation:
    return conversation_from_dict(_read_json(path, label), path, label, split)


def conversation_from_dict(data: Any, path: Path, label: str,
                           split: Literal["easy", "hard"] | None = None) -> Conversation:
    """A conversation from its parsed JSON (a dataset file, or a prediction file made from one).

    Without ``split`` it is read off the folder name (``easy`` or else hard), as the dataset and
    the reference's prediction folders are laid out.
    """
    if split is None:
        split = "easy" if path.parent.name == "easy" else "hard"
    if not isinstance(data, dict):
        raise DataError(f"{label}: expected a JSON object")
    name = _need(data, "name", str, label)
    conversation_id = _need(data, "conversation_id", str, label)
    scenario = _need(data, "scenario", str, label, optional=True)
    user = _need(data, "user", dict, label)
    _need(user, "username", str, label, "user")
    for key in ("email", "phone", "name", "password", "session_token", "verification_code"):
        _need(user, key, str, label, "user", optional=True)
    metadata = _need(data, "metadata", dict, label)
    timestamp = _need(metadata, "timestamp", str, label, "metadata")
    try:
        datetime.strptime(timestamp, TIMESTAMP_FORMAT)
    except ValueError:
        raise DataError(f"{label}: metadata.timestamp: expected {TIMESTAMP_FORMAT!r}, "
                        f"got {timestamp!r}") from None
    turns = [_turn(turn, i, label)
             for i, turn in enumerate(_need(data, "conversation", list, label))]
    return Conversation(
        name=name, conversation_id=conversation_id, split=split, path=path,
        suites_used=_string_list(data, "suites_used", label),
        apis_used=_string_list(data, "apis_used", label), scenario=scenario,
        user=user, metadata=metadata, turns=turns,
    )


def _turn(turn: Any, i: int, label: str) -> Turn:
    where = f"conversation[{i}]"
    if not isinstance(turn, dict):
        raise DataError(f"{label}: {where}: expected an object, got {type(turn).__name__}")
    role = _need(turn, "role", str, label, where)
    if role not in ("user", "assistant"):
        raise DataError(f"{label}: {where}.role: expected 'user' or 'assistant', got {role!r}")
    text = _need(turn, "text", str, label, where, optional=True) or ""
    apis = _need(turn, "apis", list, label, where, optional=True) or []
    if apis and role != "assistant":
        raise DataError(f"{label}: {where}.apis: only assistant turns make calls")
    return Turn(role=role, text=text,  # type: ignore[arg-type]
                apis=[_call(api, label, f"{where}.apis[{j}]") for j, api in enumerate(apis)])


def _call(api: Any, label: str, where: str) -> CallRecord:
    if not isinstance(api, dict):
        raise DataError(f"{label}: {where}: expected an object, got {type(api).__name__}")
    request = _need(api, "request", dict, label, where)
    name = _need(request, "api_name", str, label, f"{where}.request")
    parameters = _need(request, "parameters", dict, label, f"{where}.request", optional=True)
    exception = _need(api, "exception", str, label, where, optional=True)
    return CallRecord(name=name, arguments=dict(parameters or {}), response=api.get("response"),
                      exception=exception)
