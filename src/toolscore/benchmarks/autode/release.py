"""AutoDE's own wording and API documents, read at run time from the release's source files.

The default mode must send each model what AutoDE's runner (``evaluators/eval.py`` of
hlmu/AutoDE @ 952086b, its OpenAI path) sends. That wording is the reference's, not ours: rather
than carry a copy, it is read from the release's files beside the data (the pinned download
keeps them, :mod:`toolscore.data`):

- ``prompts/prompt_eng_system_v1.txt``: the assistant's system prompt (the runner's OpenAI
  prompt; its ``[Openai]`` tag is removed as the runner removes it, with ``str.strip``);
- ``prompts/prompt_eng_user_v3.txt``: the user agent's instruction, followed by the user
  script as the runner writes it;
- ``evaluators/eval.py``: the user agent's opening cue (the second message of its dialogue),
  read with :mod:`ast`, never imported;
- ``utils/utils.py``: the constants of the runner's spreadsheet reader (parameter types, enums)
  and its sentence naming the "optional slot" parameters, read with :mod:`ast`.

The API documents are built from ``API_list.xlsx`` exactly as that reader builds them, quirks
included: its test for a required parameter is always true, so every parameter is required; only
the two enumerations it knows are shown; a document with "(optional slot)" parameters ends with
its "must contain at least one of" sentence.

A data folder without these files cannot run the default mode: one line says which file is
missing and how to get it. Falling back to toolscore's own wording would give figures that look
like the reference's and are not; ``--strict`` runs with toolscore's own wording.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolscore.benchmarks import release_source
from toolscore.benchmarks.options import OptionError
from toolscore.data import DataError

COMMIT = "952086b"
ARCHIVE = f"https://github.com/hlmu/AutoDE/archive/{COMMIT}.zip"
ASSISTANT_PROMPT_FILE = "prompts/prompt_eng_system_v1.txt"
USER_PROMPT_FILE = "prompts/prompt_eng_user_v3.txt"
RUNNER_FILE = "evaluators/eval.py"
READER_FILE = "utils/utils.py"
FILES = (ASSISTANT_PROMPT_FILE, USER_PROMPT_FILE, RUNNER_FILE, READER_FILE)
OPENAI_TAG = "[Openai]"
DONE = "[DONE]"  # the give-up marker the prompt asks for and the runner looks for


def source_file(data_dir: Path, relative: str) -> Path:
    """``data_dir/relative``, or a one-line error naming it and how to get it."""
    return release_source.source_file(data_dir, relative, method="AutoDE",
                                      files=", ".join(FILES), archive=ARCHIVE)


_tree = release_source.parse_python


def _module_constant(tree: ast.Module, name: str, path: Path) -> Any:
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                break
    raise OptionError(f"{path}: no constant {name} (not the pinned release's file?)")


def _optional_sentence(tree: ast.Module, path: Path) -> tuple[str, str]:
    """The reader's "at least one of" sentence (its text before the names) and the separator
    it joins the names with: the f-string ``". The call must ...: {', '.join(names)}"``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and len(node.values) == 2:
            head, tail = node.values
            if (isinstance(head, ast.Constant) and isinstance(head.value, str)
                    and "at least one" in head.value and isinstance(tail, ast.FormattedValue)
                    and isinstance(tail.value, ast.Call)
                    and isinstance(tail.value.func, ast.Attribute)
                    and isinstance(tail.value.func.value, ast.Constant)):
                return head.value, str(tail.value.func.value.value)
    raise OptionError(f"{path}: no 'at least one of' sentence (not the pinned release's file?)")


def _start_cue(tree: ast.Module, path: Path) -> str:
    """The second message of the user agent's dialogue: ``user_messages = [system, cue, ...]``."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "user_messages" and isinstance(node.value, ast.List)
                and len(node.value.elts) >= 2 and isinstance(node.value.elts[1], ast.Dict)):
            cue = dict(zip([getattr(k, "value", None) for k in node.value.elts[1].keys],
                           node.value.elts[1].values, strict=True))
            content = cue.get("content")
            if isinstance(content, ast.Constant) and isinstance(content.value, str):
                return content.value
    raise OptionError(f"{path}: no user_messages opening (not the pinned release's file?)")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class Release:
    """The reference's wording and reader constants, and where they were read."""

    assistant_prompt: str
    user_prompt: str
    start_cue: str
    special_types: dict[str, str]
    enums: dict[str, list[str]]
    optional_sentence: str
    optional_separator: str
    sources: dict[str, str]  # relative path -> sha256

    def source_label(self, relative: str) -> str:
        return f"hlmu/AutoDE@{COMMIT} {relative} (sha256 {self.sources[relative][:12]})"

    def user_content(self, background: str, api: str, slots: dict[str, Any]) -> str:
        """The user script as the runner appends it to the user agent's instruction."""
        return (f"{background.strip()}\nAPI: {api}\nParameters: "
                f"{json.dumps(slots, ensure_ascii=False)}")


def load_release(data_dir: Path) -> Release:
    paths = {rel: source_file(data_dir, rel) for rel in FILES}
    assistant = paths[ASSISTANT_PROMPT_FILE].read_text(encoding="utf-8")
    if OPENAI_TAG not in assistant:
        raise OptionError(f"{paths[ASSISTANT_PROMPT_FILE]}: no {OPENAI_TAG} tag (not the "
                          "pinned release's file?)")
    reader = _tree(paths[READER_FILE])
    sentence, separator = _optional_sentence(reader, paths[READER_FILE])
    return Release(
        assistant_prompt=assistant.strip(OPENAI_TAG),  # the runner's own (character-set) strip
        user_prompt=paths[USER_PROMPT_FILE].read_text(encoding="utf-8"),
        start_cue=_start_cue(_tree(paths[RUNNER_FILE]), paths[RUNNER_FILE]),
        special_types=dict(_module_constant(reader, "SPECIAL_TYPES", paths[READER_FILE])),
        enums={k: list(v) for k, v in
               _module_constant(reader, "ENUM_MAP_ENG", paths[READER_FILE]).items()},
        optional_sentence=sentence, optional_separator=separator,
        sources={rel: digest(p) for rel, p in paths.items()})


# -- the reader's API documents ------------------------------------------------------------------
def _cell(value: Any) -> str:
    """A cell as the reader sees it: ``astype(str)`` of what pandas read (empty -> "nan")."""
    return "nan" if value is None else str(value)


def _trim_nan(text: str) -> str:
    return "" if text == "nan" else text


def reference_documents(rows: list[tuple[Any, ...]], release: Release, where: str, *,
                        enums: bool = True) -> list[dict[str, Any]]:
    """The runner's API documents (``name``, ``description``, ``parameters``), in sheet order,
    from the sheet's rows (row 1: the header), built as its reader builds them."""
    header = [str(c).strip() if c is not None else "" for c in rows[0]] if rows else []
    column = {name: i for i, name in enumerate(header)}
    docs = []
    for number, row in enumerate(rows[1:], start=2):
        def get(name: str, row: tuple[Any, ...] = row) -> str:
            i = column.get(name)
            return _cell(row[i] if i is not None and i < len(row) else None)

        if _trim_nan(get("api")).strip() == "":
            continue
        required: list[str] = []
        optional: list[str] = []
        properties: dict[str, Any] = {}
        if get("parameters") != "nan":
            for line in (p.strip() for p in get("parameters").strip().split("\n")):
                parts = line.split(": ")
                if len(parts) != 2:
                    raise DataError(f"{where} row {number}: field 'parameters' line {line!r}: "
                                    "the reference's reader needs exactly one ': '")
                name, text = parts
                text = text.replace("(required slot)", "").strip()
                required.append(name)  # the reader's test ('"" in text') is always true
                if "(optional slot)" in text:
                    text = text.replace("(optional slot)", "").strip()
                    optional.append(name)
                item: dict[str, Any] = {"type": release.special_types.get(name, "string"),
                                        "description": text}
                if enums and name in release.enums:
                    item["enum"] = list(release.enums[name])
                properties[name] = item
        description = _trim_nan(get("description"))
        if optional:
            description = (description.rstrip(".") + release.optional_sentence
                           + release.optional_separator.join(optional))
        docs.append({"name": _trim_nan(get("api")), "description": description,
                     "parameters": {"type": "object", "properties": properties,
                                    "required": required}})
    return docs
