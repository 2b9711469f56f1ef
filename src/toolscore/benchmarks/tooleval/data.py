"""ToolEval's released answers as typed records: a query, its tools and one solution path.

Two sources feed the same :class:`Sample`: the *converted* answer files (one JSON per test
subset, each path a linked list of ``{"role", "message", "next"}`` nodes) and the *raw* answer
files of the search methods (the whole DFS tree plus the conversations the search produced).
The released files are not as tidy as their description: tool-node messages are Python ``repr``
strings cut at 100 characters, and some ``Finish`` arguments are not valid JSON. Everything here
therefore parses leniently and keeps what it could not parse visible (``Step.truncated``), so a
judge sees the same evidence the reference judge saw and a bad record fails with one line that
names the file, the record and the field.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolscore.data import read_text

SUBSETS = ("G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category",
           "G3_instruction")
GIVE_UP = "give_up_and_restart"
_NAME = re.compile(r"""^\{\s*['"]name['"]\s*:\s*(['"])(.*?)\1""", re.S)
_ARGS = re.compile(r"""['"]arguments['"]\s*:\s*(['"])(.*?)(?<!\\)\1""", re.S)
_RETURN_TYPE = re.compile(r'"return_type"\s*:\s*"(\w+)"')
_FINAL = re.compile(r'"final_answer"\s*:\s*"(.*)', re.S)


class ToolEvalDataError(ValueError):
    """A released file that cannot be read; the message names file, record and field."""

    def __init__(self, path: str | Path, record: str | None, fieldname: str, problem: str):
        where = f"{path}" + (f": record {record}" if record is not None else "")
        super().__init__(f"{where}: field {fieldname!r}: {problem}")


@dataclass
class Step:
    """One node of a solution path. Tool steps carry the call and the tool's response."""

    role: str  # system | user | assistant | tool
    content: str = ""  # text, or the tool's response
    name: str | None = None  # tool name (tool steps)
    arguments: str | None = None  # tool arguments as a JSON string (tool steps)
    truncated: bool = False  # the released message was cut; content holds what was released

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, False)}


@dataclass
class Answer:
    """A model's attempt: the path it took and the arguments of its ``Finish`` call."""

    method: str
    final_answer: str  # the Finish arguments JSON string, or ""
    path: list[Step] = field(default_factory=list)
    total_steps: int = 0
    record: dict[str, Any] | None = field(default=None, repr=False)  # as the file holds it

    def as_record(self) -> dict[str, Any]:
        """The answer in the converted format, as the reference judge is shown it: the file's
        own record when it came from one, else built from the path (tool messages as
        ``{"name", "arguments", "response"}``, each node the ``next`` of the one before)."""
        if self.record is not None:
            return self.record
        details: list[dict[str, Any]] = []
        for step in reversed(self.path):
            message: Any = step.content
            if step.role == "tool":
                message = {"name": step.name, "arguments": step.arguments or "",
                           "response": step.content}
            details = [{"role": step.role, "message": message, "next": details}]
        return {"method": self.method, "total_steps": self.total_steps,
                "final_answer": self.final_answer, "answer_details": details}

    @property
    def finished(self) -> bool:
        """The path ends with a ``Finish`` call (otherwise it fails without a judge)."""
        tools = [s for s in self.path if s.role == "tool"]
        return bool(tools) and tools[-1].name == "Finish"

    @property
    def return_type(self) -> str | None:
        return parse_finish(self.final_answer)[0]

    @property
    def text(self) -> str:
        """The answer shown to the user ("" when there is none)."""
        return parse_finish(self.final_answer)[1]

    @property
    def gave_up(self) -> bool:
        """No usable answer: empty, or the model chose to give up."""
        return not self.text.strip() or self.return_type == GIVE_UP

    @property
    def gave_up_raw(self) -> bool:
        """The reference's test, on the raw string: empty, or naming ``give_up_and_restart``
        anywhere (a blank or unparsable answer is judged; one quoting the name is not)."""
        return self.final_answer == "" or GIVE_UP in self.final_answer


@dataclass
class Sample:
    """One query; ``answer`` is None when the model produced no answer file (a failure)."""

    query_id: str
    query: str
    available_tools: list[dict[str, Any]]
    answer: Answer | None
    subset: str = ""


def parse_finish(arguments: str) -> tuple[str | None, str]:
    """(return_type, final answer text) from ``Finish`` arguments, tolerating broken JSON."""
    if not arguments or not arguments.strip():
        return None, ""
    try:
        doc = json.loads(arguments, strict=False)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        text = doc.get("final_answer", "")
        return doc.get("return_type"), text if isinstance(text, str) else json.dumps(text)
    rt = _RETURN_TYPE.search(arguments)
    m = _FINAL.search(arguments)
    text = ""
    if m:
        text = re.sub(r'"\s*}?\s*$', "", m.group(1).rstrip()).replace('\\"', '"')
        text = text.replace("\\n", "\n")
    return (rt.group(1) if rt else None), text


def _tool_step(message: Any) -> Step:
    """A tool node's message: a dict, a Python ``repr`` of one, or such a repr cut short."""
    if isinstance(message, str):
        try:
            message = ast.literal_eval(message)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            m, a = _NAME.match(message), _ARGS.search(message)
            return Step("tool", content=message, name=m.group(2) if m else None,
                        arguments=a.group(2) if a else None, truncated=True)
    if not isinstance(message, dict) or not isinstance(message.get("name"), str):
        raise ValueError("tool message has no 'name'")
    args = message.get("arguments", "")
    return Step("tool", content=str(message.get("response", "")), name=message["name"],
                arguments=args if isinstance(args, str) else json.dumps(args))


def path_from_nodes(nodes: list[dict[str, Any]]) -> list[Step]:
    """The converted format's node list as a path; any branching keeps the last child."""
    steps: list[Step] = []
    node = nodes[-1] if nodes else None
    while node is not None:
        role, message = node.get("role"), node.get("message", "")
        if role == "tool":
            steps.append(_tool_step(message))
        elif role in ("system", "user", "assistant"):
            steps.append(Step(role, content=message if isinstance(message, str)
                              else json.dumps(message)))
        else:
            raise ValueError(f"unknown role {role!r}")
        nxt = node.get("next") or []
        node = nxt[-1] if nxt else None
    return steps


def _sample(path: Path, qid: str, rec: Any, subset: str) -> Sample:
    def need(obj: Any, key: str, kind: type | tuple[type, ...], name: str) -> Any:
        if not isinstance(obj, dict) or key not in obj:
            raise ToolEvalDataError(path, qid, name, "missing")
        if not isinstance(obj[key], kind):
            raise ToolEvalDataError(path, qid, name, f"expected {kind}, got "
                                    f"{type(obj[key]).__name__}")
        return obj[key]

    query = need(rec, "query", str, "query")
    tools = need(rec, "available_tools", list, "available_tools")
    raw = rec.get("answer")
    if raw is None:
        return Sample(qid, query, tools, None, subset)
    final = raw.get("final_answer") or "" if isinstance(raw, dict) else ""
    if not isinstance(final, str):
        raise ToolEvalDataError(path, qid, "answer.final_answer", "expected a string")
    nodes = need(raw, "answer_details", list, "answer.answer_details")
    try:
        steps = path_from_nodes(nodes)
    except (ValueError, AttributeError, TypeError) as e:
        raise ToolEvalDataError(path, qid, "answer.answer_details", str(e)) from None
    total = raw.get("total_steps") or len(steps)
    if isinstance(total, bool) or not isinstance(total, int):
        raise ToolEvalDataError(path, qid, "answer.total_steps", f"expected an integer, got "
                                f"{total!r}")
    answer = Answer(str(raw.get("method", "")), final, steps, total, raw)
    return Sample(qid, query, tools, answer, subset)


def _read_json(path: Path) -> Any:
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    text = read_text(path)
    try:
        return json.loads(text)
    except ValueError as e:
        raise ToolEvalDataError(path, None, "(file)", f"not JSON: {e}") from None


def load_converted(path: str | Path, limit: int | None = None) -> list[Sample]:
    """One converted answer file (``{query_id: record}``), in file order."""
    path = Path(path)
    doc = _read_json(path)
    if not isinstance(doc, dict):
        raise ToolEvalDataError(path, None, "(file)", "expected an object keyed by query id")
    items = list(doc.items())[:limit] if limit is not None else list(doc.items())
    return [_sample(path, str(qid), rec, path.stem) for qid, rec in items]


def load_answers(directory: str | Path, subsets: list[str] | None = None,
                 limit: int | None = None) -> list[Sample]:
    """Every subset file in a converted-answers directory (or one file), ``limit`` per subset.

    A directory of raw answers (``G*_answer/*.json``) is converted on the fly.
    """
    directory = Path(directory)
    if directory.is_file():
        return load_converted(directory, limit)
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory}: no such answer directory")
    files = sorted(directory.glob("*.json"))
    if not files and list(directory.glob("G*_answer")):
        return load_raw_dir(directory, limit=limit)
    if subsets is not None:
        files = [f for f in files if f.stem in subsets]
        missing = set(subsets) - {f.stem for f in files}
        if missing:
            raise FileNotFoundError(f"{directory}: no subset file for {sorted(missing)}")
    if not files:
        raise FileNotFoundError(f"{directory}: no converted answer files (*.json)")
    return [s for f in files for s in load_converted(f, limit)]


# -- raw answers ------------------------------------------------------------------------------
def _path_from_messages(messages: list[dict[str, Any]]) -> list[Step]:
    """A chat conversation as a path: each function-calling assistant message becomes a tool
    step whose response is the content of the message after it."""
    steps: list[Step] = []
    for i, m in enumerate(messages):
        role = m.get("role")
        call = m.get("function_call")
        if role == "assistant" and call:
            nxt = messages[i + 1] if i + 1 < len(messages) else {}
            response = nxt.get("content") if nxt.get("role") in ("function", "tool") else ""
            steps.append(Step("tool", content=response or "", name=call.get("name"),
                              arguments=call.get("arguments", "")))
        elif role in ("system", "user", "assistant"):
            steps.append(Step(role, content=m.get("content") or ""))
        elif role not in ("function", "tool"):
            raise ValueError(f"message {i}: unknown role {role!r}")
    return steps


def tree_chain(tree: dict[str, Any]) -> list[dict[str, Any]]:
    """One root-to-leaf chain of a search tree: the first branch whose leaf gave an answer,
    else the last branch explored (the search's final attempt)."""
    def gave_answer(chain: list[dict[str, Any]]) -> bool:
        leaf = chain[-1]
        return (leaf.get("node_type") == "Action Input" and len(chain) > 1
                and chain[-2].get("description") == "Finish"
                and parse_finish(leaf.get("description", ""))[0] == "give_answer")

    chains: list[list[dict[str, Any]]] = []
    stack: list[list[dict[str, Any]]] = [[tree]]
    while stack:  # depth first, children in order, so chains come out in exploration order
        chain = stack.pop()
        children = chain[-1].get("children") or []
        if not children:
            chains.append(chain)
        stack.extend(chain + [c] for c in reversed(children))
    for chain in chains:
        if gave_answer(chain):
            return chain
    return chains[-1]


def _path_from_tree(tree: dict[str, Any], system: str, query: str) -> list[Step]:
    steps = [Step("system", content=system), Step("user", content=query)]
    chain = tree_chain(tree)
    for i, node in enumerate(chain):
        kind = node.get("node_type")
        if kind == "Thought" and node.get("description"):
            steps.append(Step("assistant", content=node["description"]))
        elif kind == "Action Input" and i > 0 and chain[i - 1].get("node_type") == "Action":
            steps.append(Step("tool", content=node.get("observation", ""),
                              name=chain[i - 1].get("description"),
                              arguments=node.get("description", "")))
    return steps


def load_raw_answer(path: str | Path) -> Sample:
    """A raw answer file (``<qid>_<method>.json``) converted to a :class:`Sample`."""
    path = Path(path)
    doc = _read_json(path)
    qid, _, method = path.stem.partition("_")
    gen = doc.get("answer_generation") if isinstance(doc, dict) else None
    if not isinstance(gen, dict):
        raise ToolEvalDataError(path, qid, "answer_generation", "missing")
    query = gen.get("query")
    if not isinstance(query, str):
        raise ToolEvalDataError(path, qid, "answer_generation.query", "missing")
    final = gen.get("final_answer") or ""
    if not isinstance(final, str):
        raise ToolEvalDataError(path, qid, "answer_generation.final_answer", "expected a string")
    conversations = gen.get("train_messages") or []
    try:
        if gen.get("valid_data") and conversations:
            steps = _path_from_messages(conversations[-1])
        elif isinstance(doc.get("tree"), dict) and isinstance(doc["tree"].get("tree"), dict):
            steps = _path_from_tree(doc["tree"]["tree"], "", query)
        else:
            steps = [Step("system"), Step("user", content=query)]
    except (ValueError, AttributeError, TypeError, KeyError) as e:
        field_name = "train_messages" if gen.get("valid_data") else "tree"
        raise ToolEvalDataError(path, qid, field_name, str(e)) from None
    tools = gen.get("function") or []
    return Sample(qid, query, tools, Answer(method, final, steps, len(steps)),
                  path.parent.name.replace("_answer", ""))


def load_raw_dir(answer_dir: str | Path, instruction_dir: str | Path | None = None,
                 limit: int | None = None) -> list[Sample]:
    """Raw answers under ``answer_dir/G*_answer/``; with ``instruction_dir`` (``G*_query.json``)
    every query is kept, those without an answer file as ``answer=None``."""
    answer_dir = Path(answer_dir)
    out: list[Sample] = []
    for group in sorted(answer_dir.glob("G*_answer")):
        name = group.name.replace("_answer", "")
        files = sorted(group.glob("*.json"), key=lambda p: (len(p.stem), p.stem))
        answered = {f.stem.partition("_")[0]: load_raw_answer(f) for f in files}
        queries = _instructions(instruction_dir, name) if instruction_dir else None
        if queries is None:
            group_samples = list(answered.values())
        else:
            known = {qid for qid, _, _ in queries}
            group_samples = [answered.get(qid) or Sample(qid, q, tools, None, name)
                             for qid, q, tools in queries]
            group_samples += [s for qid, s in answered.items() if qid not in known]
        out.extend(group_samples[:limit] if limit is not None else group_samples)
    return out


def _instructions(directory: str | Path, group: str) -> list[tuple[str, str, list[Any]]] | None:
    path = Path(directory) / f"{group}_query.json"
    if not path.exists():
        return None
    doc = _read_json(path)
    if not isinstance(doc, list):
        raise ToolEvalDataError(path, None, "(file)", "expected a list of queries")
    rows = []
    for i, rec in enumerate(doc):
        if not isinstance(rec, dict) or "query_id" not in rec or "query" not in rec:
            raise ToolEvalDataError(path, str(i), "query_id/query", "missing")
        rows.append((str(rec["query_id"]), str(rec["query"]), list(rec.get("api_list") or [])))
    return rows


def keep_test_ids(samples: list[Sample], folder: str | Path) -> list[Sample]:
    """Only the samples whose id is in their subset's test-id file (``<subset>.json``: an
    object keyed by query id, or a list of ids), as the reference judges only queries that
    are both in the answer file and in the test-id list."""
    folder = Path(folder)
    ids: dict[str, set[str]] = {}
    for subset in dict.fromkeys(s.subset for s in samples):
        path = folder / f"{subset}.json" if folder.is_dir() else folder
        if not path.is_file():
            raise ToolEvalDataError(path, None, "(file)", f"no test-id file for {subset}")
        doc = _read_json(path)
        if not isinstance(doc, (dict, list)):
            raise ToolEvalDataError(path, None, "(file)", "expected an object keyed by query "
                                    "id or a list of query ids")
        ids[subset] = {str(k) for k in doc}
    return [s for s in samples if s.query_id in ids[s.subset]]
