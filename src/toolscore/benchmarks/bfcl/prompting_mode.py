"""BFCL's prompting mode: a model without native tool calling, run as BFCL runs its prompting
models (``-T handler=prompting``).

The request: the entry's first-turn messages, with BFCL's system prompt in front (the function
documents rendered in it, :mod:`toolscore.benchmarks.bfcl.prompt_docs`; an entry's own system
message follows it in the same message), no tools, BFCL's temperature. The documents are the
released ones with BFCL's language note; names keep their dots (nothing forbids them in a
text). The reply kept is its text (None when it has none, which fails to decode, as in the
reference); it is decoded by :mod:`toolscore.benchmarks.bfcl.decode_text` under the entry's
configuration (BFCL's default one, or a format-sensitivity configuration) and judged by the
same checker as the function-calling mode, names compared as documented.

Only the Python categories run in this mode (BFCL decodes Java and JavaScript replies with
tree-sitter parsers that toolscore does not reproduce); ``format_sensitivity`` runs only here.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolscore.benchmarks.base import Sample
from toolscore.benchmarks.bfcl import prompting
from toolscore.benchmarks.bfcl.categories import (
    ALL,
    GROUPS,
    NON_SCORING,
    RUNNABLE,
    SINGLE_TURN,
    SUPPORTED,
    language,
)
from toolscore.benchmarks.bfcl.categories import parse_categories as parse_fc_categories
from toolscore.benchmarks.bfcl.decode_text import try_decode_text
from toolscore.benchmarks.bfcl.prompt_docs import PromptConfig, default_config, system_prompt
from toolscore.benchmarks.options import OptionError
from toolscore.types import Message, Reply

#: the BFCL model a prompting run's result files are filed under: a prompting model whose
#: handler decodes texts with BFCL's default prompting decoder and keeps dotted names
BFCL_PROMPTING_MODEL = "gpt-4.1-2025-04-14"
FORMAT_SENSITIVITY = "format_sensitivity"
MODE_LABEL = ("reference, prompting (BFCL's prompting handler: functions in its system prompt, "
              "calls decoded from the reply text; BFCL's evaluator)")


def parse_categories(values: Iterable[str]) -> list[str]:
    """The categories a prompting run takes: as the function-calling mode's, without Java and
    JavaScript, with ``format_sensitivity`` (named, or in ``all``) after the others."""
    names = [n.strip() for v in values for n in str(v).split(",") if n.strip()]
    sensitivity = any(n == FORMAT_SENSITIVITY or (n in GROUPS and FORMAT_SENSITIVITY in
                                                 GROUPS[n]) for n in names)
    rest = [n for n in names if n not in NON_SCORING]
    out = parse_fc_categories(rest) if rest else []
    refused = [c for c in names if c in ALL and language(c) != "python"]
    if refused:
        raise OptionError(f"bfcl: {', '.join(refused)}: not run in prompting mode (BFCL "
                          "decodes Java and JavaScript replies with parsers toolscore does "
                          "not reproduce)")
    refused = [c for c in out if c not in SINGLE_TURN and c in names]
    if refused:
        raise OptionError(f"bfcl: {', '.join(refused)}: not yet run in prompting mode")
    out = [c for c in out if c in default_categories()]
    if sensitivity:
        out.append(FORMAT_SENSITIVITY)
    if not out:
        raise OptionError("bfcl: no category given")
    return out


def default_categories() -> list[str]:
    return [c for c in SINGLE_TURN if c in SUPPORTED and language(c) == "python"]


def scored_categories(options: Any) -> list[str]:
    """The categories whose result files a benchmark with ``options`` scores."""
    if getattr(options, "handler", "fc") == "prompting":
        return [*default_categories(), FORMAT_SENSITIVITY]
    return list(RUNNABLE)


def export_model(run_dir: Path, fc_model: str) -> str:
    """The BFCL model a run's result files are filed under: ``fc_model`` for a
    function-calling run (see ``results``), the prompting model for a prompting one."""
    from toolscore.records import RunStore

    handler = (RunStore(run_dir).config().benchmark_config or {}).get("handler")
    return BFCL_PROMPTING_MODEL if handler == "prompting" else fc_model


def documents(entry: dict[str, Any], category: str) -> list[dict[str, Any]]:
    """The function documents shown in the system prompt. A format-sensitivity entry gets
    the language note twice, as the reference's loading adds it again for that category."""
    functions = prompting._language_notes(copy.deepcopy(entry["function"]), language(category))
    if category == FORMAT_SENSITIVITY:
        functions = prompting._language_notes(functions, "python")
    return functions


def messages(entry: dict[str, Any], category: str, config: PromptConfig | None = None
             ) -> list[Message]:
    prompt = system_prompt(config or default_config(), documents(entry, category))
    turn = [dict(m) for m in entry["question"][0]]
    if turn and turn[0]["role"] == "system":
        turn[0]["content"] = prompt + "\n\n" + turn[0]["content"]
    else:
        turn.insert(0, {"role": "system", "content": prompt})
    return [Message(role=m["role"], content=m.get("content")) for m in turn]


def sample_config(sample: Sample) -> PromptConfig:
    text = sample.data.get("config")
    return PromptConfig.parse(text) if text else default_config()


def sample_messages(sample: Sample) -> list[Message]:
    return messages(sample.data["entry"], sample.data["category"], sample_config(sample))


def raw_text(reply: Reply) -> Any:
    """What BFCL's prompting handler keeps of a reply: its text (None when it has none)."""
    return reply.text


# -- multi-turn messages (for a multi-turn prompting loop) ----------------------------------
def execution_results_message(calls: list[str], results: list[str]) -> str:
    """The user message that reports a step's execution results to a prompting model, as
    BFCL's multi-turn prompting loop writes it (one message for all the step's calls; the
    shorter list decides, as there)."""
    return repr([{"role": "tool", "name": call, "content": result}
                 for call, result in zip(calls, results, strict=False)])


def added_functions_message(functions: list[dict[str, Any]]) -> str:
    """The user message of a turn that only adds functions, as BFCL writes it for a
    prompting model (the documents, then BFCL's released sentence)."""
    from toolscore.benchmarks.bfcl.release import constant

    template = constant("constants/default_prompts.py",
                        "DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING")
    return str(template).format(functions=functions)


# -- the oracle ------------------------------------------------------------------------------
def render_calls(calls: list[tuple[str, dict[str, Any]]], config: PromptConfig) -> str:
    """Calls written as ``config`` asks a model to write them."""
    fmt = config.ret_fmt
    if fmt == "python":
        body = "[" + ", ".join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})"
                               for n, a in calls) + "]"
    elif fmt == "json":
        body = json.dumps([{"function": n, "parameters": a} for n, a in calls])
    else:
        from xml.sax.saxutils import escape, quoteattr

        def typed(v: Any) -> tuple[str, str]:
            kind = ("boolean" if isinstance(v, bool) else "integer" if isinstance(v, int)
                    else "float" if isinstance(v, float) else "array" if isinstance(v, list)
                    else "dict" if isinstance(v, dict) else "null" if v is None else "string")
            return kind, v if isinstance(v, str) else repr(v)

        parts = []
        for n, a in calls:
            params = []
            for k, v in a.items():
                kind, text = typed(v)
                params.append(f"<param name={quoteattr(k)} value={quoteattr(text)} "
                              f'type="{kind}"/>' if fmt == "verbose_xml" else
                              f'<param name={quoteattr(k)} type="{kind}">{escape(text)}</param>')
            inner = "".join(params)
            parts.append(f"<function name={quoteattr(n)}>"
                         + (f"<params>{inner}</params>" if fmt == "verbose_xml" else inner)
                         + "</function>")
        body = "<functions>" + "".join(parts) + "</functions>"
    return f"<TOOLCALL>{body}</TOOLCALL>" if config.tool_call_tag else body


def oracle_text(steps: list[dict[str, Any]], entry: dict[str, Any], config: PromptConfig
                ) -> list[dict[str, Any]]:
    """The oracle's function-calling steps rewritten as the text a prompting model would
    answer (documented names, the configuration's output format)."""
    names = {re.sub(r"\.", "_", f["name"]): f["name"] for f in entry.get("function") or []}
    out: list[dict[str, Any]] = []
    for step in steps:
        calls = [(names.get(c["name"], c["name"]), json.loads(c.get("arguments") or "{}"))
                 for c in step.get("tool_calls") or []]
        out.append({"content": render_calls(calls, config) if calls else step.get("content"),
                    "tool_calls": []})
    return out


# -- protocol --------------------------------------------------------------------------------
async def run_sample(sample: Sample, model: Any, epoch: int) -> dict[str, Any]:
    from toolscore.benchmarks.bfcl.oracle import oracle_steps
    from toolscore.models.scripted.oracle import reference

    category, entry = sample.data["category"], sample.data["entry"]
    source = sample.data.get("source", category)
    config = sample_config(sample)
    steps = oracle_text(oracle_steps(source, entry, sample.data["answer"]), entry, config)
    with reference(steps):
        reply = await model.generate(sample_messages(sample), [],
                                     prompting.generate_config(epoch))
    return {"category": category, "result": raw_text(reply)}


def score(output: dict[str, Any], sample: Sample) -> dict[str, Any]:
    from toolscore.benchmarks.bfcl.checker import check_entry

    config = sample_config(sample)
    decoded, error = try_decode_text(output.get("result"), config.ret_fmt, config.tool_call_tag)
    # a format-sensitivity entry is checked as its source entry's category (the reference
    # passes the source entry's id, which names it)
    category = sample.data.get("source_id") or sample.data["category"]
    v = check_entry(category, sample.data["entry"], sample.data["answer"], decoded, error,
                    dots_to_underscores=False)
    return {"valid": bool(v.valid), "error_type": v.error_type, "errors": list(v.errors)}
