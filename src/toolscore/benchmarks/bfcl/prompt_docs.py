"""BFCL's prompting system prompt: its configurations and the function documents it renders.

A configuration (``ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&
style=classic``, BFCL's default) names the output format the model is asked for, whether the
calls go in a ``<TOOLCALL>`` tag, how the function documents are written (Python docstrings,
XML or JSON), the layout (plain text or markdown) and the wording (classic or experimental).
The wording, the layouts and the output-format examples are BFCL's own, read from the released
``constants/default_prompts.py`` (:mod:`toolscore.benchmarks.bfcl.release`); this module
assembles them and renders the documents as the reference does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from toolscore.benchmarks.bfcl.release import constant

PROMPTS = "constants/default_prompts.py"
_CONFIG = re.compile(r"^ret_fmt=(python|json|verbose_xml|concise_xml)&tool_call_tag=(True|False)"
                     r"&func_doc_fmt=(python|xml|json)&prompt_fmt=(plaintext|markdown)"
                     r"&style=(classic|experimental)$")


@dataclass(frozen=True)
class PromptConfig:
    ret_fmt: str
    tool_call_tag: bool
    func_doc_fmt: str
    prompt_fmt: str
    style: str

    @classmethod
    def parse(cls, text: str) -> PromptConfig:
        found = _CONFIG.match(text)
        if found is None:
            raise ValueError(f"bfcl: not a prompt configuration: {text!r}")
        ret, tag, doc, layout, style = found.groups()
        return cls(ret, tag == "True", doc, layout, style)

    def __str__(self) -> str:
        return (f"ret_fmt={self.ret_fmt}&tool_call_tag={self.tool_call_tag}&func_doc_fmt="
                f"{self.func_doc_fmt}&prompt_fmt={self.prompt_fmt}&style={self.style}")


def default_config() -> PromptConfig:
    return PromptConfig.parse(constant(PROMPTS, "DEFAULT_SYSTEM_PROMPT_FORMAT"))


def sensitivity_configs() -> list[PromptConfig]:
    """The configurations of the format-sensitivity category, in BFCL's order: every output
    format, with and without the tag, with every document format (plain text, classic), then
    the default with markdown layout and the default with experimental wording."""
    out = [PromptConfig(ret, tag, doc, "plaintext", "classic")
           for ret in ("python", "json", "verbose_xml", "concise_xml")
           for tag in (True, False) for doc in ("python", "xml", "json")]
    out.append(PromptConfig("python", False, "json", "markdown", "classic"))
    out.append(PromptConfig("python", False, "json", "plaintext", "experimental"))
    return out


def system_prompt(config: PromptConfig, functions: list[dict[str, Any]]) -> str:
    """The system prompt for ``functions`` under ``config``, as the reference writes it."""
    style = constant(PROMPTS, "PROMPT_STYLE_TEMPLATES")[config.style]
    example = constant(PROMPTS, "OUTPUT_FORMAT_MAPPING")[config.ret_fmt]
    types = constant(PROMPTS, "PARAM_TYPE_MAPPING")[config.ret_fmt]
    calls = style["tool_call_with_tag" if config.tool_call_tag else "tool_call_no_tag"]
    tools = style["available_tools"].format(format=config.func_doc_fmt,
                                            functions=render_docs(functions,
                                                                  config.func_doc_fmt))
    layout = constant(PROMPTS, "PROMPT_TEMPLATE_MAPPING")[config.prompt_fmt]
    return str(layout.format(persona=style["persona"], task=style["task"],
                             tool_call_format=calls.format(output_format=example,
                                                           param_types=types),
                             multiturn_behavior=style["multiturn_behavior"],
                             available_tools=tools))


def render_docs(functions: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(functions, indent=4)
    if fmt == "xml":
        return "\n".join(_xml_function(f) for f in functions)
    if fmt == "python":
        parts: list[str] = []
        for f in functions:
            parts += [_python_function(f), "\n"]
        return "\n\n".join(parts)
    raise ValueError(f"bfcl: unknown function document format {fmt!r}")


def _described(meta: dict[str, Any]) -> str:
    text = str(meta.get("description", ""))
    if "enum" in meta:
        text += f" Enum values: {meta['enum']}."
    return text


# -- XML -------------------------------------------------------------------------------------
def _xml_param(name: str, meta: dict[str, Any], required: list[str] | None, level: int
               ) -> str:
    pad = "  " * level
    kind = meta.get("type", "string")
    if "items" in meta and "type" in meta["items"]:
        kind = f"{kind}[{meta['items']['type']}]"
    elif "additionalProperties" in meta:
        kind = f"{kind}[{meta['additionalProperties'].get('type', 'string')}]"
    needed = "true" if required is None or name in required else "false"
    tag = f'<param name="{name}" type="{kind}" required="{needed}"'
    if "default" in meta:
        tag += f' default="{meta["default"]!r}"'
    # the reference drops every comma from the opening tag (a default's too)
    text = f"{pad}{tag.replace(',', '')}>\n{pad}  <desc>{_described(meta)}</desc>\n"
    if "properties" in meta:
        inner = meta.get("required")
        text += f"{pad}  <params>\n"
        text += "".join(_xml_param(n, m, inner, level + 2) for n, m in meta["properties"].items())
        text += f"{pad}  </params>\n"
    return text + f"{pad}</param>\n"


def _xml_function(function: dict[str, Any]) -> str:
    schema = function["parameters"]
    required = schema.get("required")
    params = "".join(_xml_param(n, m, required, 2)
                     for n, m in schema.get("properties", {}).items())
    return (f'<function name="{function["name"]}">\n  <desc>{function.get("description", "")}'
            f"</desc>\n  <params>\n{params}  </params>\n</function>\n")


# -- Python docstrings -----------------------------------------------------------------------
_PY_TYPES = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}


def _py_type(meta: dict[str, Any]) -> str:
    kind = meta.get("type", "string")
    if kind in _PY_TYPES:
        return _PY_TYPES[kind]
    if kind in ("array", "list", "tuple") and "items" in meta:
        return f"list[{_py_type(meta['items'])}]"
    if kind in ("object", "dict"):
        if "additionalProperties" in meta:
            return f"dict[str, {_py_type(meta['additionalProperties'])}]"
        return "dict"
    return str(kind)


def _py_param(name: str, meta: dict[str, Any], depth: int) -> str:
    default = f", default={meta['default']!r}" if "default" in meta else ""
    line = f"{' ' * (8 + 4 * depth)}{name} ({_py_type(meta)}{default}): {_described(meta)}\n"
    return line + "".join(_py_param(n, m, depth + 1)
                          for n, m in meta.get("properties", {}).items())


def _python_function(function: dict[str, Any]) -> str:
    props = function.get("parameters", {}).get("properties", {})
    text = (f"# Function: {function['name']}\n    \"\"\"\n    "
            f"{function.get('description', '')}\n\n")
    if props:
        text += "    Args:\n" + "".join(_py_param(n, m, 0) for n, m in props.items())
    return text + '    """\n'
