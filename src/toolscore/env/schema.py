"""JSON schemas of tool parameters, derived from type hints.

The simple shapes (str, int, float, bool, list[...], dict, Optional, Union, a Literal of one
JSON type) are written by hand, because the schemas ToolTalk's tools show the model must stay
byte-identical to the ones the published figures were measured with. Everything else (Enum,
date/datetime, tuple, TypedDict, pydantic models, dataclasses, a Literal of mixed types...) is
derived by pydantic's TypeAdapter, a library made for it, so the schema is valid JSON schema and
never silently empty. A type that has no JSON schema raises TypeError when the tool is defined,
not when a model first sees it.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean",
                               dict: "object", list: "array"}

# Keywords whose value is one schema, a list of schemas, or a name -> schema map: the places
# where a key called "title" is pydantic's label rather than a property's name.
_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_NAMED = ("properties", "$defs", "patternProperties")


class SchemaError(TypeError):
    """A parameter type that cannot be expressed as JSON schema."""


def schema_for(annotation: Any) -> dict[str, Any]:
    """JSON schema of a type hint; raises SchemaError for a type that has none."""
    if annotation is Any:
        return {}
    origin = get_origin(annotation)
    if origin is Literal:
        values = list(get_args(annotation))
        kinds = {type(v) for v in values}
        if len(kinds) == 1 and next(iter(kinds)) in _JSON_TYPES:
            return {"type": _JSON_TYPES[type(values[0])], "enum": values}
        return _derived(annotation)
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(annotation) if a is not type(None)]
        if len(inner) == 1:
            return schema_for(inner[0])
        return {"anyOf": [schema_for(a) for a in inner]}
    if origin in (list, typing.List):  # noqa: UP006
        (item,) = get_args(annotation) or (Any,)
        return {"type": "array"} if item is Any else {"type": "array", "items": schema_for(item)}
    if origin in (dict, typing.Dict):  # noqa: UP006
        return {"type": "object"}
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}
    if typing.is_typeddict(annotation):
        return _typed_dict(annotation)
    return _derived(annotation)


def _typed_dict(annotation: Any) -> dict[str, Any]:
    """A TypedDict by hand: pydantic refuses ``typing.TypedDict`` before Python 3.12, and its
    fields are plain hints this module already knows how to describe."""
    try:
        hints = typing.get_type_hints(annotation)
    except Exception as e:
        raise SchemaError(f"{_type_name(annotation)} has unreadable hints "
                          f"({type(e).__name__})") from None
    props = {}
    for key, hint in hints.items():
        try:
            props[key] = schema_for(hint)
        except SchemaError as e:
            raise SchemaError(f"{_type_name(annotation)}.{key}: {e}") from None
    schema: dict[str, Any] = {"type": "object", "properties": props}
    required = [k for k in hints if k in getattr(annotation, "__required_keys__", ())]
    if required:
        schema["required"] = required
    return schema


def _derived(annotation: Any) -> dict[str, Any]:
    """pydantic's validation schema of ``annotation``, with references inlined (a tool's
    parameters are shown to models one property at a time, so there is no shared ``$defs``)."""
    from pydantic import PydanticUserError, TypeAdapter
    from pydantic.errors import PydanticSchemaGenerationError

    try:
        raw = TypeAdapter(annotation).json_schema()
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError, ValueError,
            NameError) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SchemaError(f"{_type_name(annotation)} has no JSON schema: {reason}") from None
    defs = raw.pop("$defs", {})
    return _clean(_inline(raw, defs, ()))


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(v, defs, seen) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref[len("#/$defs/"):]
        if name in seen:
            raise SchemaError(f"{name} is recursive, which a tool parameter cannot express")
        target = _inline(defs[name], defs, (*seen, name))
        rest = {k: _inline(v, defs, seen) for k, v in node.items() if k != "$ref"}
        return {**target, **rest}
    return {k: _inline(v, defs, seen) for k, v in node.items()}


def _clean(schema: Any) -> Any:
    """Drop pydantic's ``title`` labels (noise to a model) from every subschema, but never a
    property that is called "title"."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key in _ONE:
            out[key] = _clean(value)
        elif key in _MANY and isinstance(value, list):
            out[key] = [_clean(v) for v in value]
        elif key in _NAMED and isinstance(value, dict):
            out[key] = {k: _clean(v) for k, v in value.items()}
        else:
            out[key] = value
    return out


def _type_name(annotation: Any) -> str:
    name = getattr(annotation, "__qualname__", None) or getattr(annotation, "__name__", None)
    return name if isinstance(name, str) and get_origin(annotation) is None else repr(annotation)
