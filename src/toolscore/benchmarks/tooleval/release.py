"""ToolBench's own evaluator files, read at run time: what the reference mode asks its judge.

The reference mode must send the judge what ToolBench's ``tooleval`` sends, so its questions
are not toolscore's text: they are the evaluator ``tooleval_gpt-3.5-turbo_default`` of the
pinned release (``toolbench/tooleval/evaluators/<name>/``): ``template.txt`` holds one
``<function><name>…</name><description>…</description></function>`` block per question (the
user message, with ``{placeholders}``), ``config.yaml`` the function schemas the judge must call
and the sampling fields (``completions_kwargs``). The files come with the dataset download
(:data:`toolscore.benchmarks.tooleval.dataset.TOOLEVAL_SOURCE`) or from ``--option evaluator=DIR``.

As the reference asks: one user message and no system prompt; the one function, forced (in the
legacy ``functions`` request shape when the judge's ``call_api`` asks for it); when
the caller wants a reason, a required ``reason`` string added after the label (pass rate and
preference do, the win rate's status questions do not); a judge configuration's template, when
one is given, as a system prompt before it (a deviation the verdicts' judge id names);
``max_tokens`` and ``temperature`` from the config and no ``seed``. A reply whose call is
missing or not JSON is asked again afresh, 3 tries in all (the reference's retry); a label
outside the enum is an error verdict where the reference would stop.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from toolscore.benchmarks.options import option
from toolscore.data import DataError, read_structured, read_text
from toolscore.judges.llm import INFRA, Verdict
from toolscore.models.base import InfraError
from toolscore.types import GenerateConfig, Message, ToolSpec

EVALUATOR = "tooleval_gpt-3.5-turbo_default"
EVALUATOR_DIR = f"toolbench/tooleval/evaluators/{EVALUATOR}"
TRIES = 3
_BLOCK = re.compile(r"<function>(.*?)</function>", re.S)
_NAME = re.compile(r"<name>(.*?)</name>", re.S)
_DESCRIPTION = re.compile(r"<description>(.*?)</description>", re.S)


@dataclass(frozen=True)
class ReleaseQuestion:
    """One question of the evaluator: its user text and the function its verdict calls."""

    name: str
    text: str  # the template's description, with {placeholders}
    function: dict[str, Any]  # the config's schema for it
    key: str  # the verdict argument (the first property: answer_status, task_status, index)

    def spec(self, reason: bool) -> ToolSpec:
        """The function offered, with the reference's ``reason`` argument when asked for."""
        fn = copy.deepcopy(self.function)
        params = fn.setdefault("parameters", {"type": "object", "properties": {}})
        if reason:
            params.setdefault("required", []).append("reason")
            params.setdefault("properties", {})["reason"] = {
                "type": "string", "description": "explain your answer."}
        return ToolSpec(str(fn["name"]), str(fn.get("description", "")), params)

    def labels(self) -> tuple[str, ...]:
        enum = self.function.get("parameters", {}).get("properties", {}).get(self.key, {})
        return tuple(str(v) for v in enum.get("enum", ()))

    def parse(self, raw: str) -> tuple[str, str] | str:
        """``(label, reason)`` from the call's arguments, or why not."""
        try:
            args = json.loads(raw)
        except ValueError:
            return f"arguments of {self.name} are not JSON"
        if not isinstance(args, dict) or self.key not in args:
            return f"{self.name} was called without {self.key!r}"
        value, reason = args[self.key], args.get("reason", "")
        reason = reason if isinstance(reason, str) else json.dumps(reason)
        labels = self.labels()
        if labels:
            if value not in labels:
                return f"{self.key}={value!r} is not one of {list(labels)}"
            return str(value), reason
        try:  # a number (the preference's index), read as the reference's int() reads it
            return str(int(value)), reason
        except (TypeError, ValueError):
            return f"{self.key}={value!r} is not a number"


@dataclass(frozen=True)
class ReleaseEvaluator:
    questions: dict[str, ReleaseQuestion]
    max_tokens: int | None
    temperature: float | None
    source: str  # what run.json and the report say
    digest: str

    def __getitem__(self, name: str) -> ReleaseQuestion:
        return self.questions[name]


def find_evaluator(data_dir: Path | None = None, explicit: Path | None = None) -> Path:
    """The evaluator folder: ``explicit``, else inside the dataset folder in use, else inside
    any other place the tooleval dataset is looked for (``$TOOLSCORE_DATA``, the user cache)."""
    if explicit is not None:
        return Path(explicit)
    from toolscore.data import candidates

    places = ([Path(data_dir)] if data_dir is not None else []) + [
        folder for _, folder in candidates("tooleval")]
    for folder in places:
        if (folder / EVALUATOR_DIR / "config.yaml").is_file():
            return folder / EVALUATOR_DIR
    raise DataError(f"ToolBench's evaluator files ({EVALUATOR_DIR}/config.yaml, template.txt) "
                    f"are not in {', '.join(str(p) for p in places)}: download the dataset "
                    "again, or pass --option evaluator=DIR")


def load_evaluator(folder: Path) -> ReleaseEvaluator:
    config_path, template_path = folder / "config.yaml", folder / "template.txt"
    config = read_structured(config_path)
    kwargs = config.get("completions_kwargs") if isinstance(config, dict) else None
    if not isinstance(kwargs, dict) or not isinstance(kwargs.get("functions"), list):
        raise DataError(f"{config_path}: field 'completions_kwargs.functions': missing")
    template = read_text(template_path)
    texts = {}
    for block in _BLOCK.findall(template):
        name, text = _NAME.search(block), _DESCRIPTION.search(block)
        if name is None or text is None:
            raise DataError(f"{template_path}: a <function> without <name> or <description>")
        texts[name.group(1)] = text.group(1)
    questions = {}
    for i, fn in enumerate(kwargs["functions"]):
        props = (fn.get("parameters") or {}).get("properties") or {} if isinstance(fn, dict) \
            else {}
        if not props or fn.get("name") not in texts:
            raise DataError(f"{config_path}: record functions[{i}]: field 'name': no such "
                            f"<function> in {template_path.name}, or no properties")
        name = fn["name"]
        questions[name] = ReleaseQuestion(name, texts[name], fn, next(iter(props)))
    digest = hashlib.sha256(config_path.read_bytes() + b"\0" + template_path.read_bytes())
    return ReleaseEvaluator(questions, kwargs.get("max_tokens"), kwargs.get("temperature"),
                            f"release: {EVALUATOR_DIR} ({folder})", digest.hexdigest()[:12])


def default_evaluator() -> ReleaseEvaluator:
    """The release's evaluator where the tooleval dataset is looked for (read each time: a
    library caller's data may change between calls)."""
    return load_evaluator(find_evaluator())


async def ask(judge: Any, question: ReleaseQuestion, variables: dict[str, Any], vote: int,
              *, reason: bool, max_tokens: int | None) -> Verdict:
    """One verdict asked as the reference asks it, at the judge's temperature (never raises
    for the model's output; an infrastructure failure is an ``infra`` error verdict,
    re-raised by a run's judge)."""
    llm = getattr(judge, "llm", judge)
    messages = [Message(role="user", content=question.text.format(**variables))]
    if getattr(llm, "system", None):  # a judge configuration's template: the user's choice,
        messages.insert(0, Message(role="system", content=llm.system))  # named by judge_id
    tools = [question.spec(reason)]
    config = GenerateConfig(temperature=llm.config.temperature, max_tokens=max_tokens, seed=None,
                            tool_choice=question.name,
                            call_api=getattr(llm.config, "call_api", None))
    verdict = Verdict(question.name, None, vote=vote, judge=getattr(llm, "judge_id", None))
    for attempt in range(TRIES):
        try:
            reply = await llm.client.generate(messages, tools,
                                              replace(config, epoch=vote * 100 + attempt))
        except InfraError as e:
            verdict.error, verdict.infra = f"{INFRA}{e}", True
            break
        verdict.usage.add(reply.usage)
        llm.usage.add(reply.usage)
        call = next((c for c in reply.tool_calls if c.name == question.name), None)
        raw = call.arguments or "" if call is not None else ""
        verdict.raw.append(raw or reply.text or "")
        parsed = question.parse(raw) if call is not None else f"no call of {question.name}"
        if isinstance(parsed, tuple):
            verdict.label, verdict.reason = parsed
            verdict.error = None
            break
        verdict.error = f"unparseable verdict after {attempt + 1} attempt(s): {parsed}"
        if "not one of" in parsed:
            break  # the reference does not retry this one: its run stops
    watched = getattr(judge, "watched", None)
    if watched is not None and watched.error is not None:
        raise watched.error
    return verdict


def evaluator_option() -> Any:
    """The ``evaluator`` option of the pass-rate and win-rate benchmarks."""
    return option(
        None, "Reference mode: the folder of ToolBench's evaluator files (config.yaml, "
        "template.txt) whose questions, function schemas and sampling fields are sent. "
        f"Default: {EVALUATOR_DIR} in the tooleval dataset (a download brings it).")


class ReleaseQuestions:
    """The release's evaluator as a benchmark reads it (mixed into the pass-rate and win-rate
    benchmarks, which set ``options`` (``mode``, ``evaluator``) and ``_evaluator``)."""

    options: Any
    _evaluator: ReleaseEvaluator | None

    @property
    def evaluator(self) -> ReleaseEvaluator | None:
        """The release's evaluator (reference mode), read once."""
        if self.options.mode != "reference":
            return None
        if self._evaluator is None:
            folder = find_evaluator(getattr(self, "data_dir", None), self.options.evaluator)
            self._evaluator = load_evaluator(folder)
        return self._evaluator

    def found_evaluator(self) -> ReleaseEvaluator | None:
        """The evaluator if its files are there (None otherwise): what the run's settings
        show before :meth:`check`, which refuses missing files after the answers' own errors."""
        try:
            return self.evaluator
        except DataError:
            return None
