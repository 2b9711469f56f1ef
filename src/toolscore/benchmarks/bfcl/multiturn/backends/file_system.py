"""BFCL's GorillaFileSystem: an in-memory tree of directories and text files, worked on one
folder at a time from a current directory.

The nodes are BFCL's ``Directory`` (public ``name``, ``contents``; ``parent`` links up) and
``File`` (``name``, ``content``); two nodes are equal when their names and contents are, as
the state checker compares them. Moving or copying a directory makes a new node sharing (mv)
or shallow-copying (cp) the old node's contents, so the moved children keep their old
``parent``; ``cd ..`` from them follows that link, as in BFCL.

In the long-context category the loaded tree grows as BFCL grows it: every file not in
``FILES_TAIL_USED`` gets ``FILE_CONTENT_EXTENSION`` appended, and every directory without a
subdirectory gets the empty files ``POPULATE_FILE_EXTENSION`` names (filler read from the
release, see :mod:`toolscore.benchmarks.bfcl.release`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backend import Backend
from toolscore.benchmarks.bfcl.release import constant

#: characters a new file or directory name may not hold
_FORBIDDEN = '|/\\?%*:"><'


class File:
    """A text file."""

    def __init__(self, name: str, content: str = "") -> None:
        self.name = name
        self.content = content

    def _write(self, text: str) -> None:
        self.content = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, File) and (self.name, self.content) == (other.name, other.content)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<<File: {self.name}, Content: {self.content}>>"


class Directory:
    """A folder: its entries by name, in insertion order."""

    def __init__(self, name: str, parent: Directory | None = None) -> None:
        self.name = name
        self.parent = parent
        self.contents: dict[str, File | Directory] = {}

    def _add_file(self, name: str, content: str = "") -> None:
        if name in self.contents:
            raise ValueError(f"File '{name}' already exists in directory '{self.name}'.")
        self.contents[name] = File(name, content)

    def _add_directory(self, name: str) -> Directory:
        if name in self.contents:
            raise ValueError(f"Directory '{name}' already exists in directory '{self.name}'.")
        made = self.contents[name] = Directory(name, self)
        return made

    def _get_item(self, name: str) -> File | Directory | None:
        return self if name == "." else self.contents.get(name)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Directory) and self.name == other.name
                and self.contents == other.contents)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        above = self.parent.name if self.parent else None
        return f"<Directory: {self.name}, Parent: {above}, Contents: {self.contents}>"


def _valid_name(name: str) -> bool:
    return not any(c in name for c in _FORBIDDEN)


def _size(node: File | Directory) -> int:
    if isinstance(node, File):
        return len(node.content.encode("utf-8"))
    return sum(_size(child) for child in node.contents.values())


def _readable(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _walk(directory: Directory, base: str) -> Iterator[tuple[str, str]]:
    """(entry name, path) of everything under ``directory``, depth first."""
    for name, node in directory.contents.items():
        path = f"{base}/{name}"
        yield name, path
        if isinstance(node, Directory):
            yield from _walk(node, path)


class GorillaFileSystem(Backend):
    """Shell-like commands over one tree, relative to the current directory."""

    def __init__(self) -> None:
        self.root: Directory
        self._current_dir: Directory

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GorillaFileSystem) and self.root == other.root

    __hash__ = None  # type: ignore[assignment]

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        self.long_context = long_context
        self.root = Directory("/", None)
        if "root" in scenario:
            top = next(iter(scenario["root"]))
            self.root = self._load_tree(scenario["root"][top]["contents"], Directory(top, None))
        self._current_dir = self.root

    def _load_tree(self, entries: dict[str, Any], into: Directory) -> Directory:
        leaf = True
        for name, spec in entries.items():
            if spec["type"] == "directory":
                leaf = False
                into.contents[name] = self._load_tree(spec["contents"], Directory(name, into))
            elif spec["type"] == "file":
                text = spec["content"]
                if self.long_context and name not in constant("long_context.py",
                                                              "FILES_TAIL_USED"):
                    text += constant("long_context.py", "FILE_CONTENT_EXTENSION")
                into.contents[name] = File(name, text)
        if leaf and self.long_context:
            for filler in constant("long_context.py", "POPULATE_FILE_EXTENSION"):
                into._add_file(filler)
        return into

    def _find_dir(self, path: str | None) -> Directory | dict[str, str]:
        """The directory at ``path`` (absolute, or relative to the current one; ``None`` and
        ``.`` are the current one), or BFCL's error dict."""
        if path is None or path == ".":
            return self._current_dir
        if path == "/":
            return self.root
        node: Directory = self.root if path.startswith("/") else self._current_dir
        for part in path.strip("/").split("/"):
            step = node._get_item(part)
            if not isinstance(step, Directory):
                return {"error": f"cd: '{path}': No such file or directory"}
            node = step
        return node

    def _file(self, name: str) -> File | None:
        """The file ``name`` of the current directory (None: absent, or a directory)."""
        if name in self._current_dir.contents:
            node = self._current_dir._get_item(name)
            if isinstance(node, File):
                return node
        return None

    def pwd(self) -> dict[str, str]:
        names = []
        node: Directory | None = self._current_dir
        while node is not None:
            names.append(node.name)
            node = node.parent
        return {"current_working_directory": "/" + "/".join(reversed(names))}

    def ls(self, a: bool = False) -> dict[str, list[str]]:
        names = list(self._current_dir.contents.keys())
        if not a:
            names = [n for n in names if not n.startswith(".")]
        return {"current_directory_content": names}

    def cd(self, folder: str) -> dict[str, str]:
        folder = folder.rstrip("/") or "/"
        if folder not in {".", "..", "/"} and "/" in folder:
            return {"error": f"cd: {folder}: Unsupported path. Only one folder level at a time "
                             "is supported."}
        if folder == "..":
            if self._current_dir.parent:
                self._current_dir = self._current_dir.parent
                return {}
            if self.root == self._current_dir:
                return {"error": "Current directory is already the root. Cannot go back."}
            return {"error": "cd: ..: No such directory"}
        target = self._find_dir(folder)
        if isinstance(target, dict):
            return target
        self._current_dir = target
        return {"current_working_directory": target.name}

    def mkdir(self, dir_name: str) -> dict[str, str] | None:
        if not _valid_name(dir_name):
            return {"error": f"mkdir: cannot create directory '{dir_name}': Invalid character"}
        if dir_name in self._current_dir.contents:
            return {"error": f"mkdir: cannot create directory '{dir_name}': File exists"}
        self._current_dir._add_directory(dir_name)
        return None

    def touch(self, file_name: str) -> dict[str, str] | None:
        if not _valid_name(file_name):
            return {"error": f"touch: cannot touch '{file_name}': Invalid character"}
        if file_name in self._current_dir.contents:
            return {"error": f"touch: cannot touch '{file_name}': File exists"}
        self._current_dir._add_file(file_name)
        return None

    def echo(self, content: str, file_name: str | None = None) -> dict[str, str] | None:
        if file_name is None:
            return {"terminal_output": content}
        if not _valid_name(file_name):
            return {"error": f"echo: cannot write to '{file_name}': Invalid character"}
        if not file_name:
            return {"terminal_output": content}
        if file_name not in self._current_dir.contents:
            return {"error": f"echo: cannot write to '{file_name}': No such file"}
        # a directory has no _write: the AttributeError is what BFCL reports too
        self._current_dir._get_item(file_name)._write(content)  # type: ignore[union-attr]
        return None

    def cat(self, file_name: str) -> dict[str, str]:
        if not _valid_name(file_name):
            return {"error": f"cat: '{file_name}': Invalid character"}
        if file_name not in self._current_dir.contents:
            return {"error": f"cat: '{file_name}': No such file or directory"}
        node = self._current_dir._get_item(file_name)
        if isinstance(node, File):
            return {"file_content": node.content}
        return {"error": f"cat: '{file_name}': Is a directory"}

    def find(self, path: str = ".", name: str | None = None) -> dict[str, Any]:
        start = self._find_dir(path)
        if isinstance(start, dict):
            message = start.get("error", "")
            if message.startswith("cd:"):
                return {"error": message.replace("cd:", "find:", 1)}
            return start
        return {"matches": [p for entry, p in _walk(start, path.rstrip("/"))
                            if name is None or name in entry]}

    def wc(self, file_name: str, mode: str = "l") -> dict[str, Any]:
        if mode not in ["l", "w", "c"]:
            return {"error": f"wc: invalid mode '{mode}'"}
        file = self._file(file_name)
        if file is None:
            return {"error": f"wc: {file_name}: No such file or directory"}
        if mode == "l":
            return {"count": len(file.content.splitlines()), "type": "lines"}
        if mode == "w":
            return {"count": len(file.content.split()), "type": "words"}
        return {"count": len(file.content), "type": "characters"}

    def sort(self, file_name: str) -> dict[str, str]:
        file = self._file(file_name)
        if file is None:
            return {"error": f"sort: {file_name}: No such file or directory"}
        return {"sorted_content": "\n".join(sorted(file.content.splitlines()))}

    def grep(self, file_name: str, pattern: str) -> dict[str, Any]:
        file = self._file(file_name)
        if file is None:
            return {"error": f"grep: {file_name}: No such file or directory"}
        return {"matching_lines": [line for line in file.content.splitlines() if pattern in line]}

    def du(self, human_readable: bool = False) -> dict[str, str]:
        total = _size(self._current_dir)
        return {"disk_usage": _readable(total) if human_readable else f"{total} bytes"}

    def tail(self, file_name: str, lines: int = 10) -> dict[str, str]:
        file = self._file(file_name)
        if file is None:
            return {"error": f"tail: {file_name}: No such file or directory"}
        text = file.content.splitlines()
        if lines > len(text):
            lines = len(text)
        # slicing from -lines: 0 lines gives the whole file, as BFCL's does
        return {"last_lines": "\n".join(text[-lines:])}

    def diff(self, file_name1: str, file_name2: str) -> dict[str, str]:
        here = self._current_dir.contents
        if file_name1 in here and file_name2 in here:
            first, second = self._file(file_name1), self._file(file_name2)
            if first is not None and second is not None:
                pairs = zip(first.content.splitlines(), second.content.splitlines(),
                            strict=False)  # the longer file's extra lines are not compared
                changed = [f"- {a}\n+ {b}" for a, b in pairs if a != b]
                return {"diff_lines": "\n".join(changed)}
        return {"error": f"diff: {file_name1} or {file_name2}: No such file or directory"}

    def _place(self, node: File | Directory, into: Directory, name: str, share: bool) -> None:
        """A new node ``name`` in ``into`` holding ``node``'s content: a directory's entries
        shared (``share``) or in a shallow copy of its dict."""
        if isinstance(node, File):
            into._add_file(name, node.content)
        else:
            made = into._add_directory(name)
            made.contents = node.contents if share else node.contents.copy()

    def mv(self, source: str, destination: str) -> dict[str, str]:
        return self._transfer("mv", "move", "moved", source, destination)

    def cp(self, source: str, destination: str) -> dict[str, str]:
        return self._transfer("cp", "copy", "copied", source, destination)

    def _transfer(self, cmd: str, verb: str, done: str, source: str,
                  destination: str) -> dict[str, str]:
        moving = cmd == "mv"
        here = self._current_dir
        if source not in here.contents:
            return {"error": f"{cmd}: cannot {verb} '{source}': No such file or directory"}
        node = here._get_item(source)
        assert node is not None
        if "/" in destination:
            return {"error": f"{cmd}: path not allowed in destination. Provide only a file or "
                             "directory name."}
        if destination not in here.contents:
            if moving:
                here.contents.pop(source)
            self._place(node, here, destination, moving)
            return {"result": f"'{source}' {done} to '{destination}'"}
        target = here._get_item(destination)
        if not isinstance(target, Directory):
            return {"error": f"{cmd}: cannot {verb} '{source}' to '{destination}': "
                             "Not a directory"}
        # BFCL's cp looks for "destination/source" among the target's names (never there);
        # adding an existing name then fails in the node, with the node's message
        taken = source if moving else f"{destination}/{source}"
        if taken in target.contents:
            return {"error": f"{cmd}: cannot {verb} '{source}' to '{destination}/{source}': "
                             "File exists"}
        if moving:
            here.contents.pop(source)
        self._place(node, target, source, moving)
        return {"result": f"'{source}' {done} to '{destination}/{source}'"}

    def rm(self, file_name: str) -> dict[str, str]:
        if file_name not in self._current_dir.contents:
            return {"error": f"rm: cannot remove '{file_name}': No such file or directory"}
        self._current_dir.contents.pop(file_name)
        return {"result": f"'{file_name}' removed"}

    def rmdir(self, dir_name: str) -> dict[str, str]:
        if dir_name not in self._current_dir.contents:
            return {"error": f"rmdir: cannot remove '{dir_name}': No such file or directory"}
        node = self._current_dir._get_item(dir_name)
        if not isinstance(node, Directory):
            return {"error": f"rmdir: cannot remove '{dir_name}': Not a directory"}
        if node.contents:
            return {"error": f"rmdir: cannot remove '{dir_name}': Directory not empty"}
        self._current_dir.contents.pop(dir_name)
        return {"result": f"'{dir_name}' removed"}
