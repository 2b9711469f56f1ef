"""AutoDE's API documents: what the assistant is shown about each API, from the released workbook
(``API_list.xlsx``) or from files written by users, and the check of a call against them.

Users who bring their own APIs should not have to build an Excel sheet. A document file holds a
list of APIs (or ``{"apis": [...]}``); each API has a ``name``, a ``description``, optionally
``domain`` / ``subdomain`` / ``function`` for the taxonomy, and ``parameters`` either as a
mapping ``name -> {description, required, type, enum}`` or as a list of such objects with a
``name``. ``type`` is ``string`` (default) or ``boolean``, as in the released APIs; ``enum``
is a list of strings. A parameter given as a bare string is its description (optional, string).

Everything is validated while loading, with one line per error that names the file, the API and
the field, because a typo in a user's document otherwise surfaces much later as a puzzling score.
PyYAML is imported only for ``.yaml`` / ``.yml`` files (``pip install 'toolscore[autode]'``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolscore.benchmarks.autode.workbook import read_sheet
from toolscore.data import DataError, read_structured
from toolscore.types import ToolSpec

API_FILE = "API_list.xlsx"
API_SHEET = "API list_2"
DOC_SUFFIXES = (".json", ".yaml", ".yml")
PARAMETER_TYPES = ("string", "boolean")
_API_KEYS = {"name", "api", "description", "domain", "subdomain", "function", "parameters"}
_PARAM_KEYS = {"name", "description", "required", "type", "enum"}


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


# -- documents written by users ------------------------------------------------------------------

def _text(value: Any, where: str, field: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise DataError(f"{where}: field {field!r} must be non-empty text")
    return value.strip()


def _parameter(name: str, value: Any, where: str) -> tuple[dict[str, Any], bool]:
    """(JSON schema, required) of one parameter."""
    field = f"parameters.{name}"
    if isinstance(value, str):
        value = {"description": value}
    if not isinstance(value, dict):
        raise DataError(f"{where}: field {field!r} must be an object or a description")
    unknown = sorted(set(value) - _PARAM_KEYS)
    if unknown:
        raise DataError(f"{where}: field '{field}.{unknown[0]}' is not a parameter field "
                        f"(known: {', '.join(sorted(_PARAM_KEYS))})")
    description = _text(value.get("description"), where, f"{field}.description")
    required = value.get("required", False)
    if not isinstance(required, bool):
        raise DataError(f"{where}: field '{field}.required' must be true or false")
    kind = value.get("type", "string")
    if kind not in PARAMETER_TYPES:
        raise DataError(f"{where}: field '{field}.type' must be one of "
                        f"{', '.join(PARAMETER_TYPES)}, got {kind!r}")
    schema: dict[str, Any] = {"type": kind, "description": description}
    enum = value.get("enum")
    if enum is not None:
        if kind != "string" or not isinstance(enum, list) or not enum or not all(
                isinstance(e, str) and e.strip() for e in enum):
            raise DataError(f"{where}: field '{field}.enum' must be a non-empty list of text "
                            "(string parameters only)")
        schema["enum"] = list(enum)
    return schema, required


def _parameters(value: Any, where: str) -> tuple[dict[str, Any], list[str]]:
    if value is None:
        return {}, []
    if isinstance(value, list):
        items: list[tuple[str, Any]] = []
        for i, p in enumerate(value):
            if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p["name"]:
                raise DataError(f"{where}: field 'parameters[{i}].name' must be non-empty text")
            items.append((p["name"], {k: v for k, v in p.items() if k != "name"}))
    elif isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items()]
    else:
        raise DataError(f"{where}: field 'parameters' must be a mapping or a list")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, spec in items:
        if not name.isidentifier():
            raise DataError(f"{where}: field 'parameters.{name}': name must be an identifier")
        if name in properties:
            raise DataError(f"{where}: field 'parameters.{name}' repeats")
        properties[name], is_required = _parameter(name, spec, where)
        if is_required:
            required.append(name)
    return properties, required


def parameters_text(properties: dict[str, Any], required: list[str]) -> str:
    """The parameters in the released workbook's ``name: description (required slot)`` form."""
    lines = []
    for name, schema in properties.items():
        description = schema["description"]
        if schema.get("enum") and "including" not in description:
            description += f", including {', '.join(schema['enum'])}"
        flag = "required" if name in required else "optional"
        lines.append(f"{name}: {description} ({flag} slot)")
    return "\n".join(lines)


def load_api_doc_file(path: Path) -> list[ApiDoc]:
    """The API documents of a JSON/YAML file, in file order; names must be unique."""
    path = Path(path)
    doc = read_structured(path)
    if isinstance(doc, dict) and "apis" in doc:
        doc = doc["apis"]
    if not isinstance(doc, list):
        raise DataError(f"{path}: expected a list of APIs (or an object with 'apis')")
    docs: list[ApiDoc] = []
    seen: dict[str, int] = {}
    for number, api in enumerate(doc, start=1):
        where = f"{path}: API #{number}"
        if not isinstance(api, dict):
            raise DataError(f"{where}: expected an object")
        name = api.get("name", api.get("api"))
        name = _text(name, where, "name")
        if not name.isidentifier():
            raise DataError(f"{where}: field 'name' {name!r} must be an identifier")
        where = f"{path}: API {name!r}"
        unknown = sorted(set(api) - _API_KEYS)
        if unknown:
            raise DataError(f"{where}: field {unknown[0]!r} is not an API field "
                            f"(known: {', '.join(sorted(_API_KEYS - {'api'}))})")
        if name in seen:
            raise DataError(f"{where}: field 'name' repeats API #{seen[name]}")
        seen[name] = number
        properties, required = _parameters(api.get("parameters"), where)
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        spec = ToolSpec(name, _text(api.get("description"), where, "description"), schema)
        docs.append(ApiDoc(_text(api.get("domain"), where, "domain", required=False),
                           _text(api.get("subdomain"), where, "subdomain", required=False),
                           _text(api.get("function"), where, "function", required=False),
                           spec, parameters_text(properties, required), number))
    if not docs:
        raise DataError(f"{path}: no APIs")
    return docs


# -- the released workbook -------------------------------------------------------------------------
API_COLUMNS = ("domain", "subdomain", "function", "api", "description", "parameters")
_PARAM_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")
_FLAG = re.compile(r"\s*\((required|optional) slot\)\s*$")
_BOOLEAN = re.compile(r"\bincluding True and False\b")
_CLOSED_LIST = re.compile(r"\b(?:including|can be|supports)\s+(.+)$")
_OPEN_ENDED = re.compile(r"\b(?:etc|e\.g|such as|like|usually|range|vague)\b", re.IGNORECASE)


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


def _openpyxl_rows(path: Path) -> list[tuple[Any, ...]]:
    """The API sheet's rows read by openpyxl (read-only, cached values)."""
    try:
        import openpyxl
    except ImportError:
        raise DataError(f"{path}: reading the API list needs openpyxl "
                        "(pip install 'toolscore[autode]')") from None
    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as e:  # a zip that is not a workbook, a truncated file, ...
        raise DataError(f"{path}: not a readable .xlsx workbook ({type(e).__name__}: "
                        f"{' '.join(str(e).split())[:200]})") from None
    try:
        if API_SHEET not in workbook.sheetnames:
            raise DataError(f"{path}: no sheet {API_SHEET!r}")
        return list(workbook[API_SHEET].iter_rows(values_only=True))
    finally:
        workbook.close()


def load_api_docs(root: Path, *, enums: bool = True) -> list[ApiDoc]:
    """The API documents of sheet ``API list_2`` in sheet order.

    ``root`` is the dataset folder or the workbook. ``enums=False`` leaves every string parameter
    unconstrained: a few gold slots lie outside their documented list (gold ``"train"`` where the
    document lists ``"train ticket"``), so a provider that enforces enums could not produce them.
    The sheet is read by :func:`.workbook.read_sheet`; openpyxl (``pip install
    'toolscore[autode]'``) only for a workbook outside that reader's subset. A ``.json`` /
    ``.yaml`` / ``.yml`` file holds documents written by users (see :func:`load_api_doc_file`).
    """
    path = Path(root)
    path = path / API_FILE if path.is_dir() else path
    if path.suffix.lower() in DOC_SUFFIXES:
        user_docs = load_api_doc_file(path)
        return user_docs if enums else [_without_enums(d) for d in user_docs]
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    rows = read_sheet(path, API_SHEET)
    if rows is None:  # outside what the small reader reproduces exactly: openpyxl decides
        rows = _openpyxl_rows(path)
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


# -- calls ----------------------------------------------------------------------------------------
def check_arguments(doc: ApiDoc, arguments: dict[str, Any]) -> list[tuple[str, str]]:
    """What is wrong with ``arguments`` as a call of API ``doc``: ``(kind, message)`` pairs,
    kind ``unknown_parameter`` | ``missing_required`` | ``wrong_type``, each message naming the
    API and the field."""
    properties = doc.spec.parameters.get("properties", {})
    problems = [("unknown_parameter", f"API {doc.name!r}: field {k!r} is not a parameter of "
                 "this API") for k in arguments if k not in properties]
    problems += [("missing_required", f"API {doc.name!r}: required field {k!r} is missing")
                 for k in doc.spec.parameters.get("required", []) if k not in arguments]
    for k, value in arguments.items():
        kind = properties.get(k, {}).get("type")
        if kind == "boolean" and not isinstance(value, bool):
            problems.append(("wrong_type", f"API {doc.name!r}: field {k!r} must be true or "
                             "false"))
        elif kind == "string" and not (isinstance(value, str) and value.strip()):
            problems.append(("wrong_type", f"API {doc.name!r}: field {k!r} must be non-empty "
                             "text"))
    return problems
