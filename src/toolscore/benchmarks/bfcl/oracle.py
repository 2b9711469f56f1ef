"""What the ``oracle`` model replays for a BFCL entry: a call per ground-truth call, named as
the model is shown the function (dots as underscores), with one possible value of each
argument. An optional argument whose possible values include "" (BFCL's mark for "may be
left out") is left out; a required one takes its first possible value other than "" (or ""
when that is all there is). Java and JavaScript arguments are written as strings in the
language's own syntax, as the documents ask and BFCL's checker reads them back. Relevance
entries get a call to the first function (any call counts there); irrelevance entries a reply
with no call. A multi-turn entry gets, turn by turn, the ground truth's calls in one step, then
a text (``multi_turn_steps``)."""

from __future__ import annotations

import ast
import inspect
import json
import re
from typing import Any

from toolscore.benchmarks.bfcl.categories import is_relevance, language

OMITTED = ""


def _value(option: Any) -> Any:
    """A possible value as a model would write it: nested dictionaries of possible values
    (BFCL's way of listing a dictionary argument's options) resolved to their first."""
    if isinstance(option, dict):
        return {k: _value(v[0] if isinstance(v, list) and v else v)
                for k, v in option.items()
                if not (isinstance(v, list) and v and OMITTED in v)}
    if isinstance(option, list):
        return [_value(v) for v in option]
    return option


def _java_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


def _java_element(value: Any, nested: str | None, container: str) -> str:
    """An element of a Java list: BFCL reads an element by the list's element type when the
    document gives one (an ArrayList's strings and chars within quotes, an array's without),
    else as a Java literal."""
    if not nested:
        return _java_literal(value)
    if container == "ArrayList" and nested == "String":
        return json.dumps(str(value))
    if container == "ArrayList" and nested == "char":
        return f"'{value}'"
    return _java(value, nested, None)


def _java(value: Any, kind: str, nested: str | None) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind == "long" and isinstance(value, int):
        return f"{value}L"
    if kind == "float" and isinstance(value, (int, float)):
        return f"{value}f"
    if isinstance(value, list):
        items = ", ".join(_java_element(v, nested, kind) for v in value)
        if kind == "Array":
            return f"new {nested or 'Object'}[]{{{items}}}"
        return f"new ArrayList<>(Arrays.asList({items}))" if value else "new ArrayList<>()"
    if isinstance(value, dict):
        puts = " ".join(f"put({json.dumps(str(k))}, {_java_literal(v)});"
                        for k, v in value.items())
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}" if value else \
            "new HashMap<>()"
    return str(value)


def _js_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, list):
        return "[" + ", ".join(_js_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_js_literal(v)}" for k, v in value.items()) + "}"
    return str(value)


def _js(value: Any, kind: str) -> str:
    if isinstance(value, str):
        return value
    if kind == "Bigint" and isinstance(value, int) and not isinstance(value, bool):
        return f"{value}n"
    return _js_literal(value)


def _arguments(possible: dict[str, list[Any]], doc: dict[str, Any] | None, lang: str
               ) -> dict[str, Any]:
    params = ((doc or {}).get("parameters") or {})
    required = set(params.get("required") or [])
    props = params.get("properties") or {}
    out: dict[str, Any] = {}
    for name, options in possible.items():
        if name not in required and (not options or OMITTED in options):
            continue
        chosen = next((o for o in options if o != OMITTED), OMITTED)
        value = _value(chosen)
        kind = (props.get(name) or {}).get("type", "")
        if lang == "java":
            value = _java(value, kind, ((props.get(name) or {}).get("items") or {}).get("type"))
        elif lang == "javascript":
            value = _js(value, kind)
        out[name] = value
    return out


def oracle_steps(category: str, entry: dict[str, Any], answer: dict[str, Any] | None
                 ) -> list[dict[str, Any]]:
    if is_relevance(category):
        if "irrelevance" in category or not entry.get("function"):
            return [{"content": "None of the functions applies.", "tool_calls": []}]
        name = re.sub(r"\.", "_", entry["function"][0]["name"])
        return [{"tool_calls": [{"name": name, "arguments": "{}"}]}]
    docs = {d["name"]: d for d in entry.get("function") or []}
    calls = []
    for truth in (answer or {}).get("ground_truth", []):
        for name, possible in truth.items():
            args = _arguments(possible, docs.get(name), language(category))
            calls.append({"name": re.sub(r"\.", "_", name),
                          "arguments": json.dumps(args, ensure_ascii=False)})
    return [{"tool_calls": calls}]


# -- multi-turn entries --------------------------------------------------------------------
#: what the oracle says to end each multi-turn turn
END_OF_TURN = "Done."


def _named_call(call: str, parameters: dict[str, list[str]]) -> dict[str, Any]:
    """A ground-truth call string (``cd(folder='x')``, ``sort('a.txt')``) as a tool call:
    literal arguments only, positional ones named after the backend method's parameters."""
    node = ast.parse(call.strip(), mode="eval").body
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        raise ValueError(f"bfcl: not a call of a function: {call!r}")
    name = node.func.id
    args = {parameters[name][i]: ast.literal_eval(a) for i, a in enumerate(node.args)}
    args.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
    return {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}


def _parameters(classes: list[str]) -> dict[str, list[str]]:
    from toolscore.benchmarks.bfcl.multiturn.backend import backend_class

    out: dict[str, list[str]] = {}
    for cls in classes:
        for name, method in inspect.getmembers(backend_class(cls), inspect.isfunction):
            if not name.startswith("_"):
                out[name] = [p for p in inspect.signature(method).parameters if p != "self"]
    return out


def multi_turn_steps(entry: dict[str, Any], answer: dict[str, Any]
                     ) -> list[list[dict[str, Any]]]:
    """Per turn, what the oracle replies: one step with the turn's ground-truth calls (none
    when the turn expects none), then a text that ends the turn."""
    parameters = _parameters(list(entry["involved_classes"]))
    turns: list[list[dict[str, Any]]] = []
    for truth in answer["ground_truth"]:
        calls = [_named_call(c, parameters) for c in truth]
        steps: list[dict[str, Any]] = [{"tool_calls": calls}] if calls else []
        turns.append([*steps, {"content": END_OF_TURN}])
    return turns
