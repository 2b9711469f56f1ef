"""API documents written by users, as JSON or YAML, in the same model as the released workbook.

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

from pathlib import Path
from typing import Any

from toolscore.data import DataError, read_structured
from toolscore.types import ToolSpec

DOC_SUFFIXES = (".json", ".yaml", ".yml")
PARAMETER_TYPES = ("string", "boolean")
_API_KEYS = {"name", "api", "description", "domain", "subdomain", "function", "parameters"}
_PARAM_KEYS = {"name", "description", "required", "type", "enum"}


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


def load_api_doc_file(path: Path) -> list[Any]:
    """The API documents (:class:`~toolscore.benchmarks.autode.data.ApiDoc`) of a JSON/YAML
    file, in file order; names must be unique."""
    from toolscore.benchmarks.autode.data import ApiDoc

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


def check_arguments(doc: Any, arguments: dict[str, Any]) -> list[tuple[str, str]]:
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
