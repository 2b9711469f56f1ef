"""Prediction sets for BFCL's single-turn categories and multi_turn_base, in the result-file
shape of an OpenAI function-calling ("-FC") model, derived deterministically from the dataset.

For every entry the generator yields named variants of a model's raw output: the ground
truth (``ORACLE``) and perturbations that each aim at one of BFCL's verdicts (a wrong type,
a missing or unexpected parameter, a wrong value, a wrong function name, a wrong number of
calls, text instead of calls, calls where none are wanted, arguments that are not JSON; for
multi-turn entries, a dropped call, a wrong argument, a turn without calls, a missing turn).
A fixture row is ``(category, id, variant) -> verdict``; the reference evaluator's verdicts
for every row live in ``tests/fixtures/bfcl/`` and the tests regenerate the predictions from
the shared dataset.

The raw output of an FC model is a list of ``{function_name: arguments_json}`` (one per tool
call) or, when the model answered in text, a plain string. Function names are given with
dots replaced by underscores, as OpenAI's tool names allow no dots (BFCL's checker maps the
expected name the same way for such models).

Standard library only: the fixture script imports this module under the reference's own
Python environment.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

NON_LIVE = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
            "parallel_multiple", "irrelevance")
LIVE = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
        "live_irrelevance", "live_relevance")
SINGLE_TURN = NON_LIVE + LIVE
ORACLE = "ground_truth"
TEXT_REPLY = "None of the available tools fits this request, so I will answer directly."
DONE_REPLY = "Done: that is all for this request."
PREFIX = "BFCL_v4_"


def is_relevance(category: str) -> bool:
    """Categories judged only on whether the model called a tool (no possible answer)."""
    return "relevance" in category  # also matches "irrelevance"


def language(category: str) -> str:
    if category.endswith("_java"):
        return "java"
    if category.endswith("_javascript"):
        return "javascript"
    return "python"


def read_lines(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def dataset_files(category: str) -> list[str]:
    """The dataset files (relative to the bfcl folder) a category reads."""
    files = [f"{PREFIX}{category}.json"]
    if not is_relevance(category):
        files.append(f"possible_answer/{PREFIX}{category}.json")
    return files


def load_category(root: Path, category: str) -> list[tuple[dict, dict | None]]:
    """(question entry, possible answer or None) pairs, in dataset order."""
    entries = read_lines(root / f"{PREFIX}{category}.json")
    if is_relevance(category):
        return [(entry, None) for entry in entries]
    answers = read_lines(root / "possible_answer" / f"{PREFIX}{category}.json")
    if len(answers) != len(entries):
        raise ValueError(f"{category}: {len(entries)} entries, {len(answers)} answers")
    return list(zip(entries, answers, strict=True))


# ---- the ground truth, as native values -------------------------------------------------

def _first_allowed(allowed):
    """The first allowed value that is not the "may be omitted" marker ""."""
    if not isinstance(allowed, list):
        return allowed
    for value in allowed:
        if value != "":
            return value
    return ""


def _pick_dict(value: dict) -> dict:
    # a dict's allowed values are given per key; keys allowed to be absent are left out
    return {key: _first_allowed(allowed) for key, allowed in value.items()
            if not (isinstance(allowed, list) and "" in allowed)}


def _pick(value, schema: dict):
    kind = schema.get("type")
    items = (schema.get("items") or {}).get("type")
    if isinstance(value, dict) and kind in ("dict", "HashMap"):
        return _pick_dict(value)
    if isinstance(value, list) and items == "dict":
        return [_pick_dict(item) if isinstance(item, dict) else item for item in value]
    return value


def _functions(entry: dict) -> dict[str, dict]:
    return {function["name"]: function for function in entry["function"]}


def ground_truth_calls(entry: dict, answer: dict) -> list[tuple[str, dict]]:
    """[(dataset function name, native arguments)] with the first allowed value of each
    parameter; parameters whose allowed values include "" are left out."""
    docs = _functions(entry)
    calls = []
    for call in answer["ground_truth"]:
        (name, params), = call.items()
        schema = docs.get(name, {}).get("parameters", {})
        props, required = schema.get("properties", {}), schema.get("required", [])
        # a required parameter is given even when "" is among its allowed values
        args = {param: _pick(_first_allowed(allowed), props.get(param, {}))
                for param, allowed in params.items()
                if "" not in allowed or param in required}
        calls.append((name, args))
    return calls


# ---- rendering values as Java / JavaScript source (those categories take strings) ------

def _java_literal(value, kind: str | None = None, quote: bool = True) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value) if quote else value
    if kind == "long" and isinstance(value, int):
        return f"{value}L"
    if kind == "float":
        return f"{value}f"
    return str(value)


def _java_elements(values: list, items: str | None, container: str) -> str:
    # BFCL's Java parser strips the quotes of String (and char) elements of an ArrayList
    # only; an array's elements, and "any" elements, keep whatever text they are given
    quote = container == "ArrayList" and items in ("String", "char")
    if quote and items == "char":
        return ", ".join(f"'{item}'" for item in values)
    return ", ".join(_java_literal(item, items, quote) for item in values)


def _js_literal(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_js_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_js_literal(item)}" for key, item in value.items()) + "}"
    return str(value)


_JAVA_ARRAY = {"integer": "int", "long": "long", "double": "double", "float": "float",
               "boolean": "boolean", "char": "char", "String": "String", "any": "Object"}


def _render(value, schema: dict, lang: str):
    """A native value as the string a model writes for a Java/JavaScript parameter."""
    if lang == "python" or isinstance(value, str):
        return value
    kind = schema.get("type")
    items = (schema.get("items") or {}).get("type")
    if lang == "java":
        if kind == "Array" and isinstance(value, list):
            body = _java_elements(value, items, kind)
            return f"new {_JAVA_ARRAY.get(items, 'Object')}[]{{{body}}}"
        if kind == "ArrayList" and isinstance(value, list):
            return f"new ArrayList<>(Arrays.asList({_java_elements(value, items, kind)}))"
        if kind == "HashMap" and isinstance(value, dict):
            puts = " ".join(f"put({_java_literal(k)}, {_java_literal(v)});"
                            for k, v in value.items())
            return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
        return _java_literal(value, kind)
    if kind == "Bigint" and isinstance(value, int):
        return f"{value}n"
    return _js_literal(value)


# ---- raw outputs ------------------------------------------------------------------------

def _tool_name(name: str) -> str:
    return name.replace(".", "_")


def _raw(calls: list[tuple[str, dict]]) -> list[dict[str, str]]:
    return [{_tool_name(name): json.dumps(args)} for name, args in calls]


def _dummy(schema: dict):
    return {"integer": 1, "float": 1.0, "number": 1.0, "boolean": True, "array": [],
            "dict": {}, "tuple": []}.get(schema.get("type"), "example")


def _some_call(entry: dict) -> list[dict[str, str]]:
    """A call to the first offered function, its required parameters given placeholders
    (a made-up function when none is offered)."""
    if not entry["function"]:
        return _raw([("lookup", {"query": "example"})])
    function = entry["function"][0]
    props = function["parameters"].get("properties", {})
    args = {param: _dummy(props.get(param, {}))
            for param in function["parameters"].get("required", [])}
    return _raw([(function["name"], args)])


def _relevance_variants(category: str, entry: dict) -> dict[str, object]:
    call = _some_call(entry)
    common = {"empty_list": [], "empty_text": "", "unparsable": [{next(iter(call[0])): "{"}]}
    if "irrelevance" in category:
        # abstaining is the right answer: the oracle answers in text
        return {ORACLE: TEXT_REPLY, "call": call, **common}
    return {ORACLE: call, "text": TEXT_REPLY, **common}


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_WRONG_VALUE = (
    ("wrong_value_string", lambda v: isinstance(v, str) and v != "", lambda v: v + "zzq"),
    ("wrong_value_number", lambda v: _is_int(v) or isinstance(v, float), lambda v: v + 7),
    ("wrong_value_bool", lambda v: isinstance(v, bool), lambda v: not v),
    ("wrong_value_list", lambda v: isinstance(v, list) and v != [] and
     not isinstance(v[0], dict), lambda v: v + v[:1]),
    ("wrong_value_nested_dict", lambda v: isinstance(v, dict) and v != {},
     lambda v: {**v, next(iter(v)): "zzq"}),
    ("wrong_value_list_of_dicts", lambda v: isinstance(v, list) and v != [] and
     isinstance(v[0], dict), lambda v: v + v[:1]),
)

# Python-only type perturbations: (name, parameter types it applies to, value test, change)
_WRONG_TYPE = (
    ("int_as_string", ("integer",), _is_int, str),
    ("int_as_float", ("integer",), _is_int, float),
    ("float_as_int", ("float",), lambda v: isinstance(v, float) and v.is_integer(), int),
    ("float_as_string", ("float",), lambda v: isinstance(v, float), str),
    ("bool_as_string", ("boolean",), lambda v: isinstance(v, bool), lambda v: str(v).lower()),
    ("list_as_string", ("array", "tuple"), lambda v: isinstance(v, list), json.dumps),
    ("list_items_as_strings", ("array", "tuple"),
     lambda v: isinstance(v, list) and v != [] and all(_is_int(i) or isinstance(i, float)
                                                       for i in v),
     lambda v: [str(i) for i in v]),
    ("dict_as_string", ("dict",), lambda v: isinstance(v, dict), json.dumps),
    ("string_as_list", ("string",), lambda v: isinstance(v, str), lambda v: [v]),
)


def _first_param(args: dict, props: dict, test, types=None) -> str | None:
    for param, value in args.items():
        if types is not None and props.get(param, {}).get("type") not in types:
            continue
        if test(value):
            return param
    return None


def ast_variants(category: str, entry: dict, answer: dict) -> dict[str, object]:
    """Named raw outputs for an entry with a possible answer; the first is the oracle."""
    lang = language(category)
    docs = _functions(entry)
    calls = ground_truth_calls(entry, answer)

    def props_of(name: str) -> dict:
        return docs.get(name, {}).get("parameters", {}).get("properties", {})

    def render(name: str, args: dict) -> tuple[str, dict]:
        props = props_of(name)
        return name, {p: _render(v, props.get(p, {}), lang) for p, v in args.items()}

    def with_first(args: dict | None = None, name: str | None = None) -> list:
        first_name, first_args = calls[0]
        changed = [(name or first_name, first_args if args is None else args)] + calls[1:]
        return _raw([render(n, a) for n, a in changed])

    out: dict[str, object] = {ORACLE: _raw([render(n, a) for n, a in calls])}
    oracle = out[ORACLE]
    out["text"] = TEXT_REPLY
    out["empty_text"] = ""
    out["empty_list"] = []
    first_tool = next(iter(oracle[0]))
    out["unparsable"] = [{first_tool: oracle[0][first_tool][:-1]}] + oracle[1:]
    name, args = calls[0]
    out["wrong_func_name"] = with_first(name=name + "_v2")
    out["extra_call"] = oracle + oracle[:1]
    if len(calls) > 1:
        out["drop_call"] = oracle[:-1]
        if oracle[::-1] != oracle:
            out["reversed_calls"] = oracle[::-1]
    function = docs.get(name, {}).get("parameters", {})
    required = [p for p in function.get("required", []) if p in args]
    if required:
        out["missing_required"] = with_first({p: v for p, v in args.items() if p != required[0]})
    optional = [p for p in args if p not in function.get("required", [])]
    if optional:
        out["missing_optional"] = with_first({p: v for p, v in args.items() if p != optional[0]})
    out["unexpected_param"] = with_first({**args, "unexpected_param": "zzq"})
    props = props_of(name)
    for variant, test, change in _WRONG_VALUE:
        param = _first_param(args, props, test)
        if param is not None:
            out[variant] = with_first({**args, param: change(args[param])})
    if lang == "python":
        for variant, types, test, change in _WRONG_TYPE:
            param = _first_param(args, props, test, types)
            if param is not None:
                out[variant] = with_first({**args, param: change(args[param])})
    elif args:
        # Java and JavaScript parameters are strings of source text; anything else is a
        # type error whatever the value
        param = next(iter(args))
        value = args[param]
        rendered = dict(render(name, args)[1])
        rendered[param] = value if not isinstance(value, str) else 0
        out["non_string_value"] = _raw([(name, rendered)]) + oracle[1:]
    return out


def entry_variants(category: str, entry: dict, answer: dict | None) -> dict[str, object]:
    if is_relevance(category):
        return _relevance_variants(category, entry)
    return ast_variants(category, entry, answer)


def category_variants(root: Path, category: str) -> list[tuple[str, dict[str, object]]]:
    """[(entry id, {variant: raw output})] in dataset order."""
    return [(entry["id"], entry_variants(category, entry, answer))
            for entry, answer in load_category(root, category)]


def oracle_results(root: Path, category: str) -> list[dict]:
    """A result file's lines where every entry gets the oracle answer."""
    return [{"id": id_, "result": variants[ORACLE]}
            for id_, variants in category_variants(root, category)]


def mixed_results(root: Path, category: str) -> list[dict]:
    """A result file's lines where entry k (in dataset order) gets its variant k mod n, n
    the number of variants that entry has (in their generation order)."""
    lines = []
    for k, (id_, variants) in enumerate(category_variants(root, category)):
        names = list(variants)
        name = names[k % len(names)]
        lines.append({"id": id_, "variant": name, "result": variants[name]})
    return lines


def digest(rows) -> str:
    """sha256 of the rows ((category, id, variant, raw output), in order) as canonical JSON."""
    sha = hashlib.sha256()
    for row in rows:
        sha.update(json.dumps(row, sort_keys=True, ensure_ascii=True).encode() + b"\n")
    return sha.hexdigest()


def all_rows(root: Path, categories=SINGLE_TURN):
    """(category, id, variant, raw output) for every row, in a stable order."""
    for category in categories:
        for id_, variants in category_variants(root, category):
            for name, result in variants.items():
                yield category, id_, name, result


# ---- multi-turn (multi_turn_base) --------------------------------------------------------

MULTI_TURN = ("multi_turn_base",)
# the function documents of each class a multi-turn entry involves
CLASS_DOCS = {"GorillaFileSystem": "gorilla_file_system.json", "MathAPI": "math_api.json",
              "MessageAPI": "message_api.json", "TwitterAPI": "posting_api.json",
              "TicketAPI": "ticket_api.json", "TradingBot": "trading_bot.json",
              "TravelAPI": "travel_booking.json", "VehicleControlAPI": "vehicle_control.json"}


def multi_turn_files(category: str) -> list[str]:
    return dataset_files(category) + [f"multi_turn_func_doc/{name}"
                                      for name in sorted(set(CLASS_DOCS.values()))]


def _parameter_order(root: Path, entry: dict) -> dict[str, list[str]]:
    order = {}
    for class_name in entry["involved_classes"]:
        for doc in read_lines(root / "multi_turn_func_doc" / CLASS_DOCS[class_name]):
            order[doc["name"]] = list(doc["parameters"].get("properties", {}))
    return order


def parse_call(text: str, order: dict[str, list[str]]) -> tuple[str, dict]:
    """A ground-truth call such as ``mv(source='a', destination='b')`` (positional
    arguments named from the function document) as (name, arguments)."""
    import ast

    node = ast.parse(text, mode="eval").body
    name = node.func.id
    args = dict(zip(order[name], (ast.literal_eval(arg) for arg in node.args), strict=False))
    args.update({kw.arg: ast.literal_eval(kw.value) for kw in node.keywords})
    return name, args


def _turns(calls_per_turn: list[list[tuple[str, dict]]], split: bool = False) -> list:
    # a turn is the model's steps: its tool calls (one step, or one per call), then a reply
    # in text, which BFCL's multi-turn decoding skips
    turns = []
    for calls in calls_per_turn:
        steps = ([_raw([call]) for call in calls] if split else [_raw(calls)]) if calls else []
        turns.append(steps + [DONE_REPLY])
    return turns


def multi_turn_variants(root: Path, entry: dict, answer: dict) -> dict[str, object]:
    order = _parameter_order(root, entry)
    truth = [[parse_call(text, order) for text in turn] for turn in answer["ground_truth"]]
    out: dict[str, object] = {ORACLE: _turns(truth), "one_call_per_step": _turns(truth, True)}
    first = next(i for i, turn in enumerate(truth) if turn)
    dropped = [list(turn) for turn in truth]
    dropped[first] = dropped[first][:-1]
    out["drop_call"] = _turns(dropped)
    out["no_calls_first_turn"] = _turns([[] if i == first else turn
                                         for i, turn in enumerate(truth)])
    out["missing_last_turn"] = _turns(truth[:-1])
    for t, turn in enumerate(truth):
        for c, (name, args) in enumerate(turn):
            param = _first_param(args, {}, lambda v: isinstance(v, str) and v != "")
            if param is None:
                param = _first_param(args, {}, lambda v: _is_int(v) or isinstance(v, float))
            if param is not None:
                changed = [list(each) for each in truth]
                value = args[param]
                changed[t][c] = (name, {**args, param: value + ("zzq" if isinstance(
                    value, str) else 7)})
                out["wrong_argument"] = _turns(changed)
                return out
    return out


def multi_turn_rows(root: Path, categories=MULTI_TURN):
    for category in categories:
        for entry, answer in load_category(root, category):
            for name, result in multi_turn_variants(root, entry, answer).items():
                yield category, entry["id"], name, result


# ---- reading the fixtures ---------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bfcl"


def load_manifest() -> dict:
    return json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))


def load_verdicts(name: str = "verdicts") -> dict:
    """{category: {id: {variant: {"valid", "error_type", "errors"}}}} as the reference judged
    ("verdicts": single-turn; "verdicts_multi_turn": multi_turn_base)."""
    import gzip

    with gzip.open(FIXTURES / f"{name}.json.gz", "rt", encoding="utf-8") as handle:
        return json.load(handle)


def load_summary(which: str) -> dict:
    """A full run's per-category accuracies ("oracle" or "mixed")."""
    return json.loads((FIXTURES / f"summary_{which}.json").read_text(encoding="utf-8"))


def decode_fc(raw) -> tuple[list[dict] | None, str | None]:
    """(decoded calls, None), or (None, exception text) when decoding fails, the way BFCL's
    OpenAI function-calling handlers decode a raw output: each item's first key is the
    function, its value parsed as JSON. A text reply is walked like a list, so it fails on
    its first character ("'str' object has no attribute 'keys'"); an empty text decodes to
    no calls."""
    try:
        decoded = []
        for item in raw:
            name = list(item.keys())[0]
            decoded.append({name: json.loads(item[name])})
        return decoded, None
    except Exception as error:  # the reference keeps whatever the decoder raised, as text
        return None, str(error)


def fixture_rows(root: Path, categories=SINGLE_TURN):
    """(category, entry, answer, variant, raw output, reference verdict) for every row."""
    verdicts = load_verdicts()
    for category in categories:
        for entry, answer in load_category(root, category):
            for name, raw in entry_variants(category, entry, answer).items():
                yield category, entry, answer, name, raw, verdicts[category][entry["id"]][name]
