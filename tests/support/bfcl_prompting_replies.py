"""Reply texts for BFCL's prompting mode, shared by the reference recorder and the tests
(standard library only: the recorder runs in the reference's environment).

- ``DECODE_CASES``: texts a model might answer, each with the output format and tool-call tag
  it is decoded under (well-formed call lists, prose around calls, broken syntax, unusual
  argument values...).
- ``render(calls, ret_fmt, tag)``: calls written in one of BFCL's output formats.
- ``ground_calls(answer)``: an entry's possible answer as calls (each parameter's first
  allowed value; an optional parameter whose first allowed value is "" is left out).
- ``sensitivity_reply(index, config_index, config, answer)``: the reply of the
  format-sensitivity result set for its entry ``index`` (26 configurations per source entry)
  under ``config`` (mostly right, some wrong in ways that depend on the
  configuration, so that the configurations' accuracies differ).
"""

from __future__ import annotations

import json
from typing import Any
from xml.sax.saxutils import escape, quoteattr

Call = tuple[str, dict[str, Any]]


def ground_calls(answer: dict[str, Any]) -> list[Call]:
    calls = []
    for call in answer["ground_truth"]:
        name, params = next(iter(call.items()))
        args = {k: v[0] for k, v in params.items() if v and v[0] != ""}
        calls.append((name, args))
    return calls


def _xml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "dict"
    if value is None:
        return "null"
    return "string"


def _xml_text(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def render(calls: list[Call], ret_fmt: str, tag: bool) -> str:
    if ret_fmt == "python":
        body = "[" + ", ".join(
            f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
            for name, args in calls) + "]"
    elif ret_fmt == "json":
        body = "```json\n" + json.dumps([{"function": n, "parameters": a} for n, a in calls]) \
            + "\n```"
    elif ret_fmt == "verbose_xml":
        body = "<functions>" + "".join(
            f"<function name={quoteattr(n)}><params>" + "".join(
                f"<param name={quoteattr(k)} value={quoteattr(_xml_text(v))} "
                f"type=\"{_xml_type(v)}\"/>" for k, v in a.items())
            + "</params></function>" for n, a in calls) + "</functions>"
    elif ret_fmt == "concise_xml":
        body = "<functions>" + "".join(
            f"<function name={quoteattr(n)}>" + "".join(
                f"<param name={quoteattr(k)} type=\"{_xml_type(v)}\">{escape(_xml_text(v))}"
                "</param>" for k, v in a.items())
            + "</function>" for n, a in calls) + "</functions>"
    else:
        raise ValueError(ret_fmt)
    return f"<TOOLCALL>{body}</TOOLCALL>" if tag else body


def _parse_config(config: str) -> tuple[str, bool]:
    fields = dict(part.split("=", 1) for part in config.split("&"))
    return fields["ret_fmt"], fields["tool_call_tag"] == "True"


def _wrong_value(calls: list[Call]) -> list[Call]:
    out = []
    for i, (name, args) in enumerate(calls):
        args = dict(args)
        if i == 0:
            for k, v in args.items():
                if isinstance(v, bool):
                    continue
                if isinstance(v, (int, float)):
                    args[k] = v + 1
                    break
                if isinstance(v, str):
                    args[k] = v + " (changed)"
                    break
            else:
                args["unexpected_parameter"] = 1
        out.append((name, args))
    return out


def sensitivity_reply(index: int, config_index: int, config: str,
                      answer: dict[str, Any]) -> str:
    ret_fmt, tag = _parse_config(config)
    calls = ground_calls(answer)
    k = index // 26  # the entry's position among the source entries
    v = (k * 7 + config_index * 5) % 13
    if config_index % 4 == 1 and k % 3 == 0:
        v = 9  # some configurations get a few more replies wrapped in prose
    if v <= 6:
        return render(calls, ret_fmt, tag)
    if v == 7:
        return render(calls, "python", False)  # the default format, whatever was asked
    if v == 8:
        return render(_wrong_value(calls), ret_fmt, tag)
    if v == 9:
        return "Sure, here are the calls you need:\n" + render(calls, ret_fmt, tag) + "\nDone."
    if v == 10:
        return render(calls[:1], ret_fmt, tag) if len(calls) > 1 else ""
    if v == 11:
        return render(calls, ret_fmt, not tag)
    return "I cannot do that with the functions I have."


#: (call strings, their execution results) of one multi-turn step
EXECUTION_CASES: list[tuple[list[str], list[str]]] = [
    (["cd(folder='documents')", "ls()"], ["{\"current_working_directory\": \"documents\"}",
                                          "{\"current_directory_content\": [\"a.txt\"]}"]),
    (["f(x='it\\'s')"], ["Error during execution: 'x'"]),
    ([], []),
    (["g(y=\"quote's\")", "h()"], ["line1\nline2", ""]),
]
#: function documents added by a multi-turn turn without a user message
HOLDOUT_CASES: list[list[dict[str, Any]]] = [
    [{"name": "mv", "description": "Move a file.", "parameters": {
        "type": "dict", "properties": {"source": {"type": "string", "description": "From."}},
        "required": ["source"]}}],
    [],
]

_PY = "python"
DECODE_CASES: list[tuple[str, str, bool]] = [
    ("[get_weather(city='Paris', unit='celsius')]", _PY, False),
    ("get_weather(city='Paris')", _PY, False),
    ("```\n[get_weather(city='Paris')]\n```", _PY, False),
    ("```python\n[get_weather(city='Paris')]\n```", _PY, False),
    ("'[get_weather(city=\"Paris\")]'", _PY, False),
    ("[a(x=1), b(y=[1, 2.5, -3], z={'k': (1, 2)})]", _PY, False),
    ("[math.factorial(number=5)]", _PY, False),
    ("[a.b.c.d(x=True, y=None, z=...)]", _PY, False),
    ("[f(x=-2.5, y=+3, z=not True)]", _PY, False),
    ("[f(x=-y)]", _PY, False),
    ("[f(x=-'a')]", _PY, False),
    ("[f(x=2 ** 10, y=1 + 2 * 3, z='a' + 'b', w=7 / 2, v=7 // 2, u=7 % 4, t=1 - 5)]", _PY,
     False),
    ("[f(x=1 + y)]", _PY, False),
    ("[f(x=unknown_name)]", _PY, False),
    ("[f(x=g(1, 2), y=h(a=1))]", _PY, False),
    ("[f(x=lambda: 1)]", _PY, False),
    ("[f(x=data[0], y=data['k'][1:2])]", _PY, False),
    ("[f(x={1, 2})]", _PY, False),
    ("[f(x=f'{1}')]", _PY, False),
    ("[f(x=1 < 2)]", _PY, False),
    ("[f(x=a.b)]", _PY, False),
    ("[f(x={**d})]", _PY, False),
    ("[f(1, 2, x=3)]", _PY, False),
    ("[f(**kw)]", _PY, False),
    ("[f()]", _PY, False),
    ("[]", _PY, False),
    ("", _PY, False),
    ("   \n", _PY, False),
    ("I cannot answer that.", _PY, False),
    ("Sure! [get_weather(city='Paris')]", _PY, False),
    ("[get_weather(city='Paris')] Hope this helps.", _PY, False),
    ("[get_weather(city='Paris'), 'text']", _PY, False),
    ("[get_weather(city='Paris')", _PY, False),
    ("[f(x=1)][0]", _PY, False),
    ("[x for x in y]", _PY, False),
    ("[f(x=1)()]", _PY, False),
    ("[f(x=1).g(y=2)]", _PY, False),
    ("[f(x=1\n, y=2)]", _PY, False),
    ("[f(x='''multi\nline''')]", _PY, False),
    ("[f(x=1e3, y=0x1F, z=1_000, w=3j)]", _PY, False),
    ("[f(x=b'bytes')]", _PY, False),
    ("[f(x=1, x=2)]", _PY, False),
    ("[f(x=[g(a=1)])]", _PY, False),
    ("[f(d={'a': {'b': 1}}, e={}, g={'h': 1, 'i': {'j': 2}}, s='it''s', n=None)]", _PY,
     False),
    ("[f(d={'a': {}, 'b': {'c': 1}})]", _PY, False),
    ("[f(x={'k': [1, 'two', {'z': 3}]}, y=(1, 'a'), z=[g(a=1)])]", _PY, False),
    ("<TOOLCALL>[get_weather(city='Paris')]</TOOLCALL>", _PY, True),
    ("Thinking... <TOOLCALL>[a(x=1), b(y=2)]</TOOLCALL> done", _PY, True),
    ("<TOOLCALL>\n[a(x=1)]\n</TOOLCALL>", _PY, True),
    ("[get_weather(city='Paris')]", _PY, True),
    ("<TOOLCALL>[a(x=1)]", _PY, True),
    ("<TOOLCALL></TOOLCALL>", _PY, True),
    ('```json\n[{"function": "f", "parameters": {"x": 1, "y": "s"}}]\n```', "json", False),
    ('[{"function": "f", "parameters": {"x": 1}}, {"function": "g", "parameters": {}}]',
     "json", False),
    ('{"function": "f", "parameters": {"x": 1}}', "json", False),
    ('Here: [{"function": "f", "parameters": {"x": [1, 2]}}] ok', "json", False),
    ('[{"function": "f"}]', "json", False),
    ('[{"name": "f", "arguments": {}}]', "json", False),
    ('[{"function": "f", "parameters": {"c": [{"a": 1}, {"b": 2}]}}]', "json", False),
    ('[{"function": "f", "parameters": {"c": [1, 2]}}, {"function": "g", "parameters": {}}]',
     "json", False),
    ("[1, 2, 3]", "json", False),
    ("not json at all", "json", False),
    ('[{"function": "f", "parameters": {"x": 1},}]', "json", False),
    ("", "json", False),
    ("42", "json", False),
    ('<TOOLCALL>[{"function": "f", "parameters": {"x": 1}}]</TOOLCALL>', "json", True),
    ('[{"function": "f", "parameters": {"x": 1}}]', "json", True),
    ('<functions><function name="f"><params><param name="x" value="1" type="integer"/>'
     '<param name="y" value="2.5" type="float"/><param name="z" value="True" type="boolean"/>'
     '<param name="s" value="hi" type="string"/><param name="l" value="[1, 2]" type="array"/>'
     '<param name="d" value="{\'a\': 1}" type="dict"/><param name="n" value="" type="null"/>'
     '<param name="t" value="(1, 2)" type="tuple"/><param name="o" value="x" type="other"/>'
     '</params></function></functions>', "verbose_xml", False),
    ('Result: <functions><function name="f"><param name="x" value="1"/></function>'
     '<function name="g"><params></params></function></functions> end', "verbose_xml", False),
    ('<functions><function name="f"><params><param name="x" value="abc" type="integer"/>'
     '</params></function></functions>', "verbose_xml", False),
    ('<functions><function><params></params></function></functions>', "verbose_xml", False),
    ('<functions><function name="f"><params><param name="x" value="1" type="integer">'
     '</params></function></functions>', "verbose_xml", False),
    ("[f(x=1)]", "verbose_xml", False),
    ('<TOOLCALL><functions><function name="f"><params><param name="x" value="a" '
     'type="string"/></params></function></functions></TOOLCALL>', "verbose_xml", True),
    ('<functions><function name="f"><param name="x" type="integer"> 7 </param>'
     '<param name="y" type="string">a &amp; b</param><param name="z" type="array">[1, "2"]'
     '</param><param name="w">plain</param><param name="e" type="string"></param>'
     '</function></functions>', "concise_xml", False),
    ('<functions><function name="f"><param name="x" type="float">nope</param></function>'
     '</functions>', "concise_xml", False),
    ('<functions><function name="f"><param type="string">v</param></function></functions>',
     "concise_xml", False),
    ('<functions><function name="f"><param name="l" type="array">[1, 2</param></function>'
     '</functions>', "concise_xml", False),
    ('<TOOLCALL><functions><function name="f"><param name="b" type="boolean">TRUE</param>'
     '</function></functions></TOOLCALL>', "concise_xml", True),
    ('<functions><function name="f"></function></functions>', "concise_xml", True),
]


def single_turn_reply(index: int, entry: dict[str, Any], answer: dict[str, Any] | None) -> str:
    """A reply for entry ``index`` of a single-turn category in BFCL's default configuration
    (Python call list, no tag): right, or wrong in one of several ways, by ``index``."""
    functions = entry.get("function") or []
    if answer is None:  # relevance and irrelevance: a call, no call, or something between
        first = functions[0]["name"] if functions else "f"
        return ["[]", f"[{first}()]", "I cannot help with that.", "",
                f"[{first.replace('.', '_')}(x=1)]", "[f(x=y+1)]"][index % 6]
    calls = ground_calls(answer)
    v = index % 9
    if v == 0:
        return render(_wrong_value(calls), "python", False)
    if v == 1:
        return "Here you go: " + render(calls, "python", False)
    if v == 2:
        return "```python\n" + render(calls, "python", False) + "\n```"
    if v == 3:
        return render([(n.replace(".", "_"), a) for n, a in calls], "python", False)
    if v == 4:
        return render(calls[:-1], "python", False) if len(calls) > 1 else ""
    if v == 5:
        return "```\n" + render(calls, "python", False) + "\n```"
    return render(calls, "python", False)
