"""ToolTalk's own wording, read at run time from the release's source files.

The default mode must send a model what ToolTalk's runner sends: its system-prompt template (a
class attribute of the runner's predictor) and, later, its tool documents. That wording is the
reference's, not ours: rather than carry a copy, it is read from the release's own Python files
beside the data (the pinned archive a user downloads holds them, :mod:`toolscore.data`), by
parsing them with :mod:`ast`, never importing them (they import openai 0.28 and the release's
package, and their code has no business running here).

A data folder without these files (one made before they were kept) cannot run the default mode:
one line says which file is missing and how to get it. Falling back to toolscore's own wording
would give figures that look like the reference's and are not; ``--strict`` is the way to run
with toolscore's own wording.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolscore.benchmarks import release_source
from toolscore.benchmarks.base import OptionError

PROMPT_FILE = "src/tooltalk/evaluation/evaluate_openai.py"
PROMPT_ATTRIBUTE = "system_prompt"
ARCHIVE = "https://github.com/microsoft/ToolTalk/archive/e05f4ce.zip"


def source_file(data_dir: Path, relative: str) -> Path:
    """``data_dir/relative``, or a one-line error naming it and how to get it."""
    return release_source.source_file(data_dir, relative, method="ToolTalk",
                                      files="src/tooltalk/", archive=ARCHIVE)


parse = release_source.parse_python


def string_value(node: ast.expr, where: str) -> str:
    """A string written as constants, joined implicitly or with ``+`` (nothing is run)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return string_value(node.left, where) + string_value(node.right, where)
    raise OptionError(f"{where}: not a string constant")


def class_attribute(tree: ast.Module, name: str) -> ast.expr | None:
    """The value assigned to ``name`` in the body of the first class that assigns it."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name)
                        and stmt.targets[0].id == name):
                    return stmt.value
    return None


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class ReleasePrompt:
    """The reference's system-prompt template and where it was read."""

    template: str
    source: str  # what run.json and the report say

    def format(self, metadata: dict[str, Any]) -> str:
        """As the reference's predictor formats it (``metadata.get("username")``: a user who
        is not logged in shows as ``None``)."""
        return self.template.format(location=metadata.get("location"),
                                    timestamp=metadata.get("timestamp"),
                                    username=metadata.get("username"))


def release_prompt(data_dir: Path) -> ReleasePrompt:
    """The template of the release's predictor, read from :data:`PROMPT_FILE`."""
    from toolscore.benchmarks.tooltalk.dataset import TOOLTALK_SOURCE

    path = source_file(data_dir, PROMPT_FILE)
    value = class_attribute(parse(path), PROMPT_ATTRIBUTE)
    if value is None:
        raise OptionError(f"{path}: no class attribute {PROMPT_ATTRIBUTE!r} (the runner's "
                          "system prompt)")
    template = string_value(value, f"{path}: {PROMPT_ATTRIBUTE}")
    return ReleasePrompt(template, source_label(path, PROMPT_FILE, TOOLTALK_SOURCE))


def source_label(path: Path, relative: str, pins: dict[str, str]) -> str:
    """``release: <file>``, said to be modified when it is not the pinned release's file."""
    label = f"release: {relative}"
    if pins.get(relative) not in (None, file_digest(path)):
        label += " (modified: not the pinned release's file)"
    return label


APIS_DIR = "src/tooltalk/apis"
APIS_INIT = f"{APIS_DIR}/__init__.py"


@dataclass(frozen=True)
class ReleaseDocuments:
    """The tool documents ToolTalk's runner offers (what its ``to_openai_doc()`` returns), in
    its ``ALL_APIS`` order, and its suites (name -> API names, in the suite's order)."""

    docs: dict[str, dict[str, Any]]
    suites: dict[str, list[str]]
    source: str

    def for_names(self, names: list[str]) -> list[dict[str, Any]]:
        return [self.docs[n] for n in names if n in self.docs]


def _names(node: ast.expr | None, where: str) -> list[str]:
    if not isinstance(node, (ast.List, ast.Tuple)) or not all(
            isinstance(e, ast.Name) for e in node.elts):
        raise OptionError(f"{where}: not a list of class names")
    return [e.id for e in node.elts if isinstance(e, ast.Name)]


def _module_assign(tree: ast.Module, name: str) -> ast.expr | None:
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name):
            return stmt.value
    return None


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def _attribute(cls: ast.ClassDef, name: str, where: str) -> Any:
    value = class_attribute(ast.Module(body=[cls], type_ignores=[]), name)
    if value is None:
        raise OptionError(f"{where}: class {cls.name} has no {name!r}")
    try:
        return ast.literal_eval(value)
    except ValueError:
        raise OptionError(f"{where}: {cls.name}.{name} is not a literal") from None


def openai_doc(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """A document shaped as the release's ``API.to_openai_doc()`` shapes it: each parameter's
    attributes without ``required``, in the source's order, and the required names in a list
    beside ``parameters`` (not inside it, where JSON Schema has it)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg, attributes in parameters.items():
        if attributes.get("required"):
            required.append(arg)
        properties[arg] = {k: v for k, v in attributes.items() if k != "required"}
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties}, "required": required}


def release_documents(data_dir: Path) -> ReleaseDocuments:
    """The documents of every API in the release's ``ALL_APIS``, read from each API class's
    ``description`` and ``parameters`` in the module ``apis/__init__.py`` imports it from."""
    from toolscore.benchmarks.tooltalk.dataset import TOOLTALK_SOURCE

    init_path = source_file(data_dir, APIS_INIT)
    init = parse(init_path)
    module_of: dict[str, str] = {}
    for stmt in init.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.level == 1 and stmt.module:
            for alias in stmt.names:
                module_of[alias.asname or alias.name] = stmt.module
    apis = _names(_module_assign(init, "ALL_APIS"), f"{init_path}: ALL_APIS")
    suite_names = _names(_module_assign(init, "ALL_SUITES"), f"{init_path}: ALL_SUITES")
    trees: dict[str, tuple[str, dict[str, ast.ClassDef]]] = {}
    modified = False

    def cls_of(name: str) -> tuple[str, ast.ClassDef]:
        nonlocal modified
        module = module_of.get(name)
        if module is None:
            raise OptionError(f"{init_path}: {name} is not imported from a module of the "
                              "release")
        if module not in trees:
            relative = f"{APIS_DIR}/{module}.py"
            path = source_file(data_dir, relative)
            modified |= "modified" in source_label(path, relative, TOOLTALK_SOURCE)
            trees[module] = (str(path), _classes(parse(path)))
        where, classes = trees[module]
        if name not in classes:
            raise OptionError(f"{where}: no class {name}")
        return where, classes[name]

    docs = {}
    for name in apis:
        where, cls = cls_of(name)
        docs[name] = openai_doc(name, _attribute(cls, "description", where),
                                _attribute(cls, "parameters", where))
    suites = {}
    for suite in suite_names:
        where, cls = cls_of(suite)
        value = class_attribute(ast.Module(body=[cls], type_ignores=[]), "apis")
        suites[_attribute(cls, "name", where)] = _names(value, f"{where}: {suite}.apis")
    label = source_label(init_path, APIS_INIT, TOOLTALK_SOURCE)
    if modified and "modified" not in label:
        label += " (modified: not the pinned release's files)"
    return ReleaseDocuments(docs, suites, label.replace(APIS_INIT, f"{APIS_DIR}/*.py"))
