"""What a model is sent for one BFCL entry, as BFCL's OpenAI function-calling handler sends it
(the reference mode): the entry's first-turn messages as they are (no system prompt of its
own), the function documents as OpenAI tools, the one sampling field it sets and nothing else.
A multi-turn entry's documents are those of its backend classes (``multi_turn_documents``),
some held out until a later turn; its turns are played by :mod:`.episode`.

The documents go through two rewrites, in BFCL's order:

1. a language note at the end of every description (Python 3, Java 8 SDK or JavaScript);
   Java and JavaScript parameters become strings whose description names the original type
   (their values are written in the language's own syntax), lists and dictionaries saying
   what their elements are;
2. the OpenAI rendering: dots in names become underscores (OpenAI refuses them), the schema's
   type is "object", and each parameter type is mapped to a JSON-schema type (``float`` gets
   ``format: float`` and a note in its description; a type the map lacks becomes "string").
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from toolscore.benchmarks.bfcl.categories import language
from toolscore.types import GenerateConfig, Message, ToolSpec

#: BFCL's generation default (its ``--temperature``), the one sampling field it sets
TEMPERATURE = 0.001

#: parameter types of BFCL's documents -> JSON-schema types of an OpenAI tool
OPENAI_TYPES = {
    "integer": "integer", "number": "number", "float": "number", "string": "string",
    "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
    "dict": "object", "object": "object", "tuple": "array", "any": "string",
    "byte": "integer", "short": "integer", "long": "integer", "double": "number",
    "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object",
    "Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string",
    "String": "string", "Bigint": "integer",
}

NOTES = {"python": " Note that the provided function is in Python 3 syntax.",
         "java": " Note that the provided function is in Java 8 SDK syntax.",
         "javascript": " Note that the provided function is in JavaScript syntax."}


def generate_config(epoch: int = 0) -> GenerateConfig:
    """The request's settings: BFCL's temperature; no token limit, seed or tool_choice (the
    API's defaults apply, as in the reference). The reference also sends ``store: false``,
    which is OpenAI's default for chat completions (the completion is not stored) and
    changes no reply; it is left out, as other providers refuse the field."""
    return GenerateConfig(temperature=TEMPERATURE, max_tokens=None, seed=None,
                          tool_choice=None, epoch=epoch)


def messages(entry: dict[str, Any]) -> list[Message]:
    """The single-turn entry's messages (its first turn), roles and texts unchanged."""
    return [Message(role=m["role"], content=m.get("content")) for m in entry["question"][0]]


def _language_notes(functions: list[dict[str, Any]], lang: str) -> list[dict[str, Any]]:
    for doc in functions:
        doc["description"] = doc["description"] + NOTES[lang]
        if lang == "python":
            continue
        name = "Java" if lang == "java" else "JavaScript"
        for param in doc["parameters"]["properties"].values():
            kind = param["type"]
            if kind == "any":
                param["description"] += (f" This parameter can be of any type of {name} "
                                         "object in string representation.")
            else:
                param["description"] += (f" This is {name} {kind} type parameter in string "
                                         "representation.")
            if kind in (("ArrayList", "Array") if lang == "java" else ("array",)):
                param["description"] += (f" The list elements are of type "
                                         f"{param['items']['type']}; they are not in string "
                                         "representation.")
                del param["items"]
            if lang == "javascript" and kind == "dict" and "properties" in param:
                param["description"] += (" The dictionary entries have the following schema; "
                                         "they are not in string representation. "
                                         + json.dumps(param["properties"]))
                del param["properties"]
            param["type"] = "string"
    return functions


def _openai_properties(properties: dict[str, Any]) -> dict[str, Any]:
    for param in properties.values():
        kind = param.get("type")
        if kind is None:
            param["type"] = "string"
        else:
            if kind == "float":
                param["format"] = "float"
                param["description"] += " This is a float type value."
            param["type"] = OPENAI_TYPES.get(kind, "string")
        if param["type"] not in ("array", "object"):
            continue
        # As in the reference, nesting is followed only this far: an object's properties, a
        # list's element type (an element type outside the map is an error there too), a
        # list of lists' inner element type, a list of objects' properties.
        if "properties" in param:
            param["properties"] = _openai_properties(param["properties"])
        elif "items" in param:
            items = param["items"]
            items["type"] = OPENAI_TYPES[items["type"]]
            if items["type"] == "array" and "items" in items:
                items["items"]["type"] = OPENAI_TYPES[items["items"]["type"]]
            elif items["type"] == "object" and "properties" in items:
                items["properties"] = _openai_properties(items["properties"])
    return properties


def _openai_documents(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Documents (already copied) in the OpenAI rendering."""
    for doc in functions:
        doc["name"] = re.sub(r"\.", "_", doc["name"])
        doc["parameters"]["type"] = "object"
        doc["parameters"]["properties"] = _openai_properties(doc["parameters"]["properties"])
    return functions


def tool_documents(entry: dict[str, Any], category: str) -> list[dict[str, Any]]:
    """The entry's function documents as the reference sends them (name, description,
    parameters), the released entry left untouched."""
    return _openai_documents(_language_notes(copy.deepcopy(entry["function"]),
                                             language(category)))


def _specs(documents: list[dict[str, Any]]) -> list[ToolSpec]:
    return [ToolSpec(name=d["name"], description=d["description"], parameters=d["parameters"])
            for d in documents]


def tools(entry: dict[str, Any], category: str) -> list[ToolSpec]:
    return _specs(tool_documents(entry, category))


# -- multi-turn entries --------------------------------------------------------------------
def multi_turn_documents(entry: dict[str, Any], documents_of: Callable[[str], list[dict[str, Any]]]
                         ) -> tuple[list[dict[str, Any]], dict[int, list[dict[str, Any]]]]:
    """A multi-turn entry's documents as BFCL prepares them when it loads the entry: those of
    its involved classes in order, each function named in ``missed_function`` moved out to the
    turn that adds it, then the language note on the documents left (so a held-out document
    never gets it). The entry's ``excluded_function`` is not read: this release of BFCL
    offers those functions too. Returns (documents offered from the first turn, turn ->
    documents added)."""
    functions = [d for name in entry["involved_classes"] for d in documents_of(name)]
    held: dict[int, list[dict[str, Any]]] = {}
    for turn, names in (entry.get("missed_function") or {}).items():
        moved = held.setdefault(int(turn), [])
        for name in names:
            at = next((i for i, d in enumerate(functions) if d["name"] == name), None)
            if at is not None:
                moved.append(functions.pop(at))
    return _language_notes(functions, "python"), held


def multi_turn_tools(documents: list[dict[str, Any]]) -> list[ToolSpec]:
    """The tools of a multi-turn request: the documents offered so far in the OpenAI
    rendering. BFCL's request also carries each document's ``response`` (the shape of what
    the function returns) beside its parameters; it is left out here, as the ``tools`` API
    defines no such field and strict servers refuse unknown ones."""
    return _specs(_openai_documents(copy.deepcopy(documents)))
