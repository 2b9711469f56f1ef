"""Tool parameter schemas (issue 10, item 11): the built-in tools keep the exact schemas the
published figures were measured with; every other type gets a real JSON schema from pydantic, or
a one-line TypeError when the tool is defined."""

from __future__ import annotations

import datetime
import enum
import hashlib
import json
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, TypedDict

import pytest
from pydantic import BaseModel

from toolscore.env.registry import load_plugins
from toolscore.env.schema import SchemaError, schema_for
from toolscore.env.tool import tool

# sha256 (first 16 hex digits) of json.dumps([name, description, parameters]) of every built-in
# tool, key order included, as measured before pydantic was used: a change here changes what
# the model is shown and so the reproduced figures.
BUILT_IN = {
    "demo/CreateNote": "e5128aaef7276d2d",
    "demo/SearchNotes": "a3f5315b0907ead3",
    "demo/DeleteNote": "a0a2dd6a3beea5d4",
    "demo/AddItem": "79241a471028d2fb",
    "demo/ListItems": "a0dfd225e3ba557b",
    "demo/ConvertUnits": "bf77c496ad8a8229",
    "demo/Calculate": "e16e8647a501bae2",
    "tooltalk/ChangePassword": "bb0ba0df16fb843a",
    "tooltalk/DeleteAccount": "9197378c427f2d55",
    "tooltalk/GetAccountInformation": "aef6bc8d412ea887",
    "tooltalk/LogoutUser": "14f4885b38ca13c6",
    "tooltalk/QueryUser": "f6d48aa3d19b6f71",
    "tooltalk/RegisterUser": "9e49ac7895dfe6b6",
    "tooltalk/ResetPassword": "19f47b13b6cd2dc4",
    "tooltalk/SendVerificationCode": "d390b838e2ed16b5",
    "tooltalk/UpdateAccountInformation": "f53552f1074bc88a",
    "tooltalk/UserLogin": "d595bca5799f70e5",
    "tooltalk/AddAlarm": "4544c525d9655ff1",
    "tooltalk/DeleteAlarm": "f82faf67762facf4",
    "tooltalk/FindAlarms": "48c190c0dec0b7ea",
    "tooltalk/CreateEvent": "437babf59ab7ee41",
    "tooltalk/DeleteEvent": "ea6b903e796ba57a",
    "tooltalk/ModifyEvent": "24bc32901a9079b8",
    "tooltalk/QueryCalendar": "087bdd614539e38c",
    "tooltalk/SearchInbox": "16f9f2b518ae24c2",
    "tooltalk/SendEmail": "9ceb25b19e54da2c",
    "tooltalk/SearchMessages": "bdfb9468a0263927",
    "tooltalk/SendMessage": "6d7a2cd1e1b9023b",
    "tooltalk/AddReminder": "fb88da61533047b7",
    "tooltalk/CompleteReminder": "0aec334331dfc6e0",
    "tooltalk/DeleteReminder": "eff95c902017eef3",
    "tooltalk/GetReminders": "cb8a2a622ee1e5e5",
    "tooltalk/CurrentWeather": "c0bd70b325f8abc8",
    "tooltalk/ForecastWeather": "942ee765f8c7a998",
    "tooltalk/HistoricWeather": "2a8d1bf7c375241a",
}


def _digest(t: Any) -> str:
    blob = json.dumps([t.name, t.description, t.parameters]).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def test_built_in_tool_schemas_are_byte_identical() -> None:
    found = {f"{s}/{t.name}": _digest(t) for s in ("demo", "tooltalk")
             for p in load_plugins(s) for t in p.tools}
    assert found == BUILT_IN


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Window(TypedDict):
    title: str
    start: datetime.date


class Point(NamedTuple):
    x: int
    y: int


class Place(BaseModel):
    title: str
    when: datetime.datetime
    color: Color = Color.RED


class Trip(BaseModel):
    stops: list[Place]


class Tree(BaseModel):
    children: list[Tree]


def _has_title_label(schema: Any) -> bool:
    """True when pydantic's "title" label survived somewhere other than as a property name."""
    if isinstance(schema, list):
        return any(_has_title_label(s) for s in schema)
    if not isinstance(schema, dict):
        return False
    if "title" in schema and isinstance(schema["title"], str):
        return True
    return any(_has_title_label(v) for k, v in schema.items() if k != "properties") or any(
        _has_title_label(v) for v in (schema.get("properties") or {}).values())


@pytest.mark.parametrize(("hint", "expected"), [
    (Color, {"enum": ["red", "blue"], "type": "string"}),
    (Level, {"enum": [1, 2], "type": "integer"}),
    (datetime.date, {"format": "date", "type": "string"}),
    (datetime.datetime, {"format": "date-time", "type": "string"}),
    (tuple[int, str], {"maxItems": 2, "minItems": 2, "type": "array",
                       "prefixItems": [{"type": "integer"}, {"type": "string"}]}),
    (tuple[float, ...], {"items": {"type": "number"}, "type": "array"}),
    (Point, {"maxItems": 2, "minItems": 2, "type": "array",
             "prefixItems": [{"type": "integer"}, {"type": "integer"}]}),
    (Literal[1, "x"], {"enum": [1, "x"]}),
    (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
    (Window, {"type": "object", "required": ["title", "start"], "properties": {
        "title": {"type": "string"}, "start": {"format": "date", "type": "string"}}}),
    (list[Color], {"type": "array", "items": {"enum": ["red", "blue"], "type": "string"}}),
    (Color | None, {"enum": ["red", "blue"], "type": "string"}),
    (int | datetime.date, {"anyOf": [{"type": "integer"},
                                     {"format": "date", "type": "string"}]}),
])
def test_derived_schemas(hint: Any, expected: dict[str, Any]) -> None:
    assert schema_for(hint) == expected


def test_nested_models_are_inlined_without_title_labels() -> None:
    schema = schema_for(Trip)
    place = schema["properties"]["stops"]["items"]
    assert place["type"] == "object"
    assert place["required"] == ["title", "when"]
    assert place["properties"]["title"] == {"type": "string"}  # a property called "title" stays
    assert place["properties"]["color"]["enum"] == ["red", "blue"]
    assert "$ref" not in json.dumps(schema) and "$defs" not in schema
    assert not _has_title_label(schema)


def test_a_tool_with_rich_parameters_shows_them_all() -> None:
    @tool("Plan")
    def plan(env: Any, color: Color, day: datetime.date, span: tuple[int, int],
             mode: Literal[1, "x"], window: Window, trip: Trip | None = None) -> dict:
        """Plan something.

        Args:
            color: which colour
            day: which day
        """
        return {}

    props = plan.parameters["properties"]
    assert all(props[name] for name in ("color", "day", "span", "mode", "window", "trip"))
    assert props["color"]["description"] == "which colour"
    assert props["day"] == {"format": "date", "type": "string", "description": "which day"}
    assert plan.parameters["required"] == ["color", "day", "span", "mode", "window"]


class Opaque:
    """A class pydantic knows nothing about."""


@pytest.mark.parametrize(("hint", "why"), [
    (Opaque, "Opaque has no JSON schema"),
    (Callable[[int], int], "has no JSON schema"),
    (Tree, "Tree is recursive"),
    (list[Opaque], "Opaque has no JSON schema"),
    (dict | Opaque, "Opaque has no JSON schema"),
])
def test_inexpressible_types_fail_at_definition(hint: Any, why: str) -> None:
    def fn(env: Any, value: Any) -> None:
        return None

    fn.__annotations__["value"] = hint
    with pytest.raises(TypeError) as info:
        tool("Broken")(fn)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("tool 'Broken', parameter 'value': ")
    assert why in message
    with pytest.raises(SchemaError):
        schema_for(hint)


def test_unresolvable_hint_fails_at_definition() -> None:
    def fn(env: Any, value: NoSuchType) -> None:  # noqa: F821
        return None

    with pytest.raises(TypeError, match=r"^tool 'fn': cannot read its type hints"):
        tool()(fn)
