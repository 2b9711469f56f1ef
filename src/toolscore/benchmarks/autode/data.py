"""Loading AutoDE's released data: user scripts, recorded result files and the API documents.

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

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolscore.data import DataError, iter_jsonl
from toolscore.types import Message, ToolSpec

SlotValue = str | bool
Role = Literal["User", "Assistant"]
BACKGROUND_FIELDS = ("Character", "Background", "Purpose")
SCRIPTS_FILE = "data_v1_2.jsonl"
API_FILE = "API_list.xlsx"
API_SHEET = "API list_2"


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


def _turns(obj: dict[str, Any], where: str) -> tuple[Turn, ...]:
    value = obj.get("content")
    if not isinstance(value, list):
        raise DataError(f"{where}: field 'content' must be a list of messages")
    turns = []
    for i, m in enumerate(value):
        if not isinstance(m, dict) or m.get("role") not in ("User", "Assistant"):
            raise DataError(f"{where}: field 'content[{i}].role' must be 'User' or 'Assistant'")
        if not isinstance(m.get("message"), str):
            raise DataError(f"{where}: field 'content[{i}].message' must be a string")
        turns.append(Turn(m["role"], m["message"]))
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
    values = []
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
        character, background, purpose = parse_background(_string(obj, "background", where),
                                                          where)
        content = _turns(obj, where)
        if not content or content[0].role != "User" or content[-1].role != "User":
            raise DataError(f"{where}: field 'content' must start and end with a User message")
        scripts.append(UserScript(uuid, character, background, purpose, content,
                                  _string(obj, "api", where),
                                  _slots(obj, where, gold=True), number))
    if not scripts:
        raise DataError(f"{path}: no user scripts")
    return scripts


# -- recorded results ------------------------------------------------------------------------------
def load_results(path: Path) -> ResultFile:
    """A recorded result file; legacy lines without state/reason/trial_uuid are accepted."""
    path = Path(path)
    result = ResultFile(path)
    for number, obj in iter_jsonl(path):
        where = f"{path}:{number}"
        state = obj.get("state")
        if state not in (None, "success", "failure"):
            raise DataError(f"{where}: field 'state' must be 'success' or 'failure', got "
                            f"{state!r}")
        for key in ("reason", "trial_uuid"):
            if obj.get(key) is not None and not isinstance(obj[key], str):
                raise DataError(f"{where}: field {key!r} must be a string")
        result.records.append(TrialRecord(
            uuid=_string(obj, "uuid", where), background=_string(obj, "background", where),
            content=_turns(obj, where), api=_string(obj, "api", where),
            slots=_slots(obj, where, gold=False), state=state, reason=obj.get("reason"),
            trial_uuid=obj.get("trial_uuid"), line=number))
    if not result.records:
        raise DataError(f"{path}: no records")
    return result


def group_trials(records: list[TrialRecord]) -> list[dict[str, TrialRecord]]:
    """Trials as uuid -> record maps: T = fewest records of any uuid; trial t = each t-th record.

    A uuid's records need not be adjacent; only their order in the file matters.
    """
    by_uuid: dict[str, list[TrialRecord]] = {}
    for record in records:
        by_uuid.setdefault(record.uuid, []).append(record)
    if not by_uuid:
        return []
    n_trials = min(len(v) for v in by_uuid.values())
    return [{uuid: recs[t] for uuid, recs in by_uuid.items()} for t in range(n_trials)]


# -- API documents ---------------------------------------------------------------------------------
API_COLUMNS = ("domain", "subdomain", "function", "api", "description", "parameters")
_PARAM_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")
_FLAG = re.compile(r"\s*\((required|optional) slot\)\s*$")
_BOOLEAN = re.compile(r"\bincluding True and False\b")
_CLOSED_LIST = re.compile(r"\b(?:including|can be|supports)\s+(.+)$")
_OPEN_ENDED = re.compile(r"\b(?:etc|e\.g|such as|like|usually|range|vague)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ApiDoc:
    """One API document: where it sits in the taxonomy and what the assistant is shown."""

    domain: str
    subdomain: str
    function: str
    spec: ToolSpec
    parameters_text: str = ""  # the cell as released, for prompts that show the document verbatim
    row: int = 0

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def parameter_names(self) -> frozenset[str]:
        return frozenset(self.spec.parameters.get("properties", {}))


def _parameter_schema(description: str, enums: bool) -> dict[str, Any]:
    """JSON schema of one parameter from its free-text description.

    Booleans are the parameters documented as "including True and False" (the gold slots hold
    JSON booleans for exactly these). An enum is read only from a closed list ("including A, B or
    C", "can be A, B, C", "supports A or B") with no open-ended marker such as "etc." or "like".
    """
    if _BOOLEAN.search(description):
        return {"type": "boolean", "description": description}
    schema: dict[str, Any] = {"type": "string", "description": description}
    match = _CLOSED_LIST.search(description)
    if enums and match and not _OPEN_ENDED.search(description):
        items = [s.strip() for s in re.split(r",\s*|\s+or\s+|\s+and\s+", match.group(1))]
        if len(items) >= 2 and all(items) and not any(s.startswith(("a ", "an ")) for s in items):
            schema["enum"] = items
    return schema


def parse_parameters(text: str, where: str, *, enums: bool = True) -> dict[str, Any]:
    """The ``parameters`` cell (``name: description (required slot)`` lines) as a JSON schema.

    Parameters marked neither required nor optional (e.g. ``deviceType``) are optional.
    """
    properties: dict[str, Any] = {}
    required: list[str] = []
    for i, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        match = _PARAM_LINE.match(line)
        if not match:
            raise DataError(f"{where}: field 'parameters' line {i}: expected 'name: description'")
        name, description = match.groups()
        if name in properties:
            raise DataError(f"{where}: field 'parameters' line {i}: {name!r} repeats")
        flag = _FLAG.search(description)
        if flag:
            description = description[:flag.start()]
            if flag.group(1) == "required":
                required.append(name)
        properties[name] = _parameter_schema(description, enums)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _without_enums(doc: ApiDoc) -> ApiDoc:
    properties = {k: {f: v for f, v in p.items() if f != "enum"}
                  for k, p in doc.spec.parameters.get("properties", {}).items()}
    spec = ToolSpec(doc.name, doc.spec.description, {**doc.spec.parameters,
                                                     "properties": properties})
    return ApiDoc(doc.domain, doc.subdomain, doc.function, spec, doc.parameters_text, doc.row)


def load_api_docs(root: Path, *, enums: bool = True) -> list[ApiDoc]:
    """The API documents of sheet ``API list_2`` in sheet order.

    ``root`` is the dataset folder or the workbook. ``enums=False`` leaves every string parameter
    unconstrained: a few gold slots lie outside their documented list (gold ``"train"`` where the
    document lists ``"train ticket"``), so a provider that enforces enums could not produce them.
    Needs openpyxl (``pip install 'toolscore[autode]'``). A ``.json`` / ``.yaml`` / ``.yml``
    file holds documents written by users (see :mod:`.apidocs`).
    """
    path = Path(root)
    path = path / API_FILE if path.is_dir() else path
    if path.suffix.lower() in (".json", ".yaml", ".yml"):
        from toolscore.benchmarks.autode.apidocs import load_api_doc_file

        user_docs: list[ApiDoc] = load_api_doc_file(path)
        return user_docs if enums else [_without_enums(d) for d in user_docs]
    try:
        import openpyxl
    except ImportError:
        raise DataError(f"{path}: reading the API list needs openpyxl "
                        "(pip install 'toolscore[autode]')") from None
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        if API_SHEET not in workbook.sheetnames:
            raise DataError(f"{path}: no sheet {API_SHEET!r}")
        rows = list(workbook[API_SHEET].iter_rows(values_only=True))
    finally:
        workbook.close()
    header = tuple(str(c).strip() if c is not None else "" for c in rows[0]) if rows else ()
    if header[:len(API_COLUMNS)] != API_COLUMNS:
        raise DataError(f"{path}:{API_SHEET} row 1: expected columns {', '.join(API_COLUMNS)}")
    docs: list[ApiDoc] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        if all(c is None for c in row):
            continue
        where = f"{path}:{API_SHEET} row {number}"
        cells = dict(zip(API_COLUMNS, row, strict=False))
        for key in API_COLUMNS[:5]:
            if not isinstance(cells.get(key), str) or not cells[key].strip():
                raise DataError(f"{where}: field {key!r} must be non-empty text")
        name = cells["api"].strip()
        if name in seen:
            raise DataError(f"{where}: field 'api' {name!r} repeats row {seen[name]}")
        seen[name] = number
        params = cells.get("parameters")
        if params is not None and not isinstance(params, str):
            raise DataError(f"{where}: field 'parameters' must be text")
        spec = ToolSpec(name, cells["description"].strip(),
                        parse_parameters(params or "", where, enums=enums))
        docs.append(ApiDoc(cells["domain"].strip(), cells["subdomain"].strip(),
                           cells["function"].strip(), spec, params or "", number))
    return docs
