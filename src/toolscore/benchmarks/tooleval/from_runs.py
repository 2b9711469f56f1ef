"""ToolEval's judges on our own runs: a run directory's transcripts as ToolEval solution paths.

ToolEval asks "did this solution path solve the task?", a question as useful for a ToolTalk,
demo or AutoDE run as for ToolBench's released answers, so a run is converted to the same
:class:`Sample` the released answers load into:

- *query*: the user's request(s). ToolTalk and the demo store only the model's side of each
  turn, so the user turns come from the benchmark's data (rebuilt from ``run.json`` exactly as
  ``rescore`` does); AutoDE records carry their whole dialogue.
- *path*: per turn, the user's words, then every assistant tool call with the tool's result
  (matched by ``tool_call_id``) and any assistant text.
- *final answer*: the last assistant text, as a ``Finish`` call (``give_answer``). Our
  protocols have no ``Finish`` tool: a conversation that ends in text has answered. One that
  ends otherwise (call limit, context full, no text) gets no ``Finish`` and so fails without a
  judge call, as an unfinished ToolBench path does. An AutoDE run ends in the API call itself
  (it is never executed); its answer is the assistant's text with that call, or the call.

Records whose run failed for infrastructure reasons (``status`` "error") are left out and
listed in the notes of :func:`load_run_report`, never scored as the assistant's failures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolscore.benchmarks.registry import benchmark_from_run
from toolscore.benchmarks.tooleval.data import Answer, Sample, Step

FINISH = "Finish"


def is_run_dir(path: str | Path) -> bool:
    """A toolscore run directory (has ``run.json``), as opposed to released answer files."""
    return Path(path).is_dir() and (Path(path) / "run.json").is_file()


def finish_step(text: str) -> tuple[Step, str]:
    """The ``Finish`` step giving ``text`` as the answer, and its arguments JSON string."""
    arguments = json.dumps({"return_type": "give_answer", "final_answer": text},
                           ensure_ascii=False)
    return Step("tool", content="", name=FINISH, arguments=arguments), arguments


def path_from_transcript(messages: list[dict[str, Any]]) -> tuple[list[Step], str | None]:
    """OpenAI-shape messages as steps, and the last assistant text (None if there is none)."""
    results = {m.get("tool_call_id"): m.get("content") or "" for m in messages
               if m.get("role") == "tool"}
    steps: list[Step] = []
    last: str | None = None
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            text = m.get("content") or ""
            if text.strip():
                steps.append(Step("assistant", content=text))
                last = text
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or call
                steps.append(Step("tool", content=str(results.get(call.get("id"), "")),
                                  name=fn.get("name"), arguments=fn.get("arguments") or ""))
        elif role == "user":
            steps.append(Step("user", content=m.get("content") or ""))
    return steps, last


def _answer(method: str, steps: list[Step], final: str | None) -> Answer:
    arguments = ""
    if final is not None and final.strip():
        step, arguments = finish_step(final)
        steps = [*steps, step]
    return Answer(method, arguments, steps, len(steps))


def _tool_schemas(benchmark: Any, names: list[str]) -> list[dict[str, Any]]:
    """OpenAI function schemas of the offered tools (bare names when they cannot be found)."""
    specs: dict[str, Any] = {}
    for attr in ("tools", "docs"):  # ToolTalk/demo: Tool objects; AutoDE: API documents
        try:
            found = getattr(benchmark, attr, None)
        except Exception:  # noqa: BLE001 - AutoDE documents may be absent: names suffice
            found = None
        if isinstance(found, dict):
            specs.update({name: getattr(t, "spec", None) for name, t in found.items()})
    out = []
    for name in names:
        spec = specs.get(name)
        out.append(spec.to_openai() if spec is not None else
                   {"type": "function", "function": {"name": name, "description": "",
                                                     "parameters": {}}})
    return out


def _conversation_sample(record: dict[str, Any], conversation: Any, benchmark: Any,
                         method: str, subset: str, qid: str) -> Sample:
    """A ToolTalk/demo record: user turns from the data, the model's side from the record."""
    turns = conversation.turns
    output = record["output"]
    steps: list[Step] = []
    users: list[str] = []
    final: str | None = None
    seen = 0  # conversation turns already walked
    for turn in output.get("turns") or []:
        index = int(turn["turn"])
        for earlier in turns[seen:index]:
            if earlier.role == "user" and earlier.text:
                users.append(earlier.text)
                steps.append(Step("user", content=earlier.text))
        seen = index + 1
        turn_steps, last = path_from_transcript(turn.get("transcript") or [])
        steps.extend(turn_steps)
        ended = turn.get("stop", "answer") == "answer" and last is not None
        final = last if ended and turn_steps and turn_steps[-1].role == "assistant" else None
    tools = _tool_schemas(benchmark, list(output.get("tools_offered") or []))
    return Sample(qid, "\n".join(users), tools, _answer(method, steps, final), subset)


def _autode_sample(record: dict[str, Any], benchmark: Any, method: str, subset: str,
                   qid: str) -> Sample:
    """An AutoDE record: the dialogue is in the record; it ends in the (unexecuted) call."""
    output = record["output"]
    steps: list[Step] = []
    users: list[str] = []
    last: str | None = None
    for turn in output.get("content") or []:
        text = str(turn.get("message") or "")
        if str(turn.get("role", "")).lower() == "user":
            users.append(text)
            steps.append(Step("user", content=text))
        elif text.strip():
            steps.append(Step("assistant", content=text))
            last = text
    api, arguments = output.get("called_api"), output.get("arguments")
    final: str | None = None
    if api:
        steps.append(Step("tool", content="", name=api, arguments=arguments or ""))
        said = (output.get("text") or "").strip()
        final = f"{said}\n{api}({arguments or ''})" if said else f"{api}({arguments or ''})"
    elif last is not None and output.get("state") != "failure":
        final = last
    names = [output["api"]] if output.get("api") else []
    tools = _tool_schemas(benchmark, names)
    return Sample(qid, "\n".join(users), tools, _answer(method, steps, final), subset)


def load_run_report(run_dir: str | Path) -> tuple[list[Sample], dict[str, Any]]:
    """The run's finished samples as ToolEval samples, and notes (benchmark, model, skipped)."""
    from toolscore.records import RunStore

    store = RunStore(run_dir)
    config = store.read_config()
    where = {}  # (id, epoch) -> line of its latest record, for messages
    for lineno, r in store.lines():
        where[(str(r["id"]), int(r.get("epoch", 0)))] = (lineno, r)
    if not where:
        raise ValueError(f"{store.samples_path}: no finished sample to judge")
    line_of = {id(r): n for n, r in where.values()}
    records = [r for _, r in where.values()]
    benchmark_name = str(config.get("benchmark") or "")
    method = str(config.get("model") or "")
    try:
        benchmark = benchmark_from_run(config, drop_unknown=True)
    except LookupError as e:  # not installed: the run names a benchmark this machine lacks
        if benchmark_name != "autode":
            raise ValueError(f"{store.path / 'run.json'}: benchmark: {e}") from None
        benchmark = None
    except Exception:
        if benchmark_name != "autode":  # ToolTalk/demo need the data for the user's turns
            raise
        benchmark = None  # AutoDE records hold the dialogue; only tool schemas are lost
    data = ({s.id: s.data for s in benchmark.samples()}
            if benchmark is not None and benchmark_name != "autode" else {})
    epochs = {int(r.get("epoch", 0)) for r in records}
    samples: list[Sample] = []
    skipped: list[str] = []
    for record in sorted(records, key=lambda r: (str(r["id"]), int(r.get("epoch", 0)))):
        qid = str(record["id"]) + (f"#{record.get('epoch', 0)}" if len(epochs) > 1 else "")
        if record.get("status") != "ok" or not isinstance(record.get("output"), dict):
            skipped.append(qid)
            continue
        if "turns" in record["output"]:
            conversation = data.get(record["id"])
            if conversation is None:
                raise LookupError(f"{store.samples_path}: line {line_of[id(record)]}: field "
                                  f"'id': sample {record['id']!r} is not in the "
                                  f"{benchmark_name} data the run names")
            samples.append(_conversation_sample(record, conversation, benchmark, method,
                                                benchmark_name, qid))
        elif "content" in record["output"]:
            samples.append(_autode_sample(record, benchmark, method, benchmark_name, qid))
        else:
            raise ValueError(f"{store.samples_path}: line {line_of[id(record)]}: field 'output': "
                             f"sample {record['id']!r}: neither "
                             "'turns' (ToolTalk/demo) nor 'content' (AutoDE)")
    notes = {"run_dir": str(run_dir), "benchmark": benchmark_name, "model": method,
             "samples": len(samples), "skipped_errors": skipped}
    return samples, notes


def load_run(run_dir: str | Path) -> list[Sample]:
    """The run's finished samples as ToolEval samples (see :func:`load_run_report`)."""
    return load_run_report(run_dir)[0]
