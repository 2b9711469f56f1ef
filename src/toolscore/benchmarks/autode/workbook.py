"""The rows of one sheet of an .xlsx workbook, read with the standard library.

Why not openpyxl: building AutoDE's benchmark reads ``API_list.xlsx``, and openpyxl's import and
parse cost more than rescoring Table 1's slots. An .xlsx is a zip of XML parts; the API sheet
holds text cells only, so a reader of the workbook part, its relationships, the shared-string
table and the sheet's cells is small.

Exactness is the contract: :func:`read_sheet` returns what openpyxl's read-only
``iter_rows(values_only=True)`` (``data_only=True``) returns (rows from row 1, each padded to
the ``<dimension>`` width, missing rows filled, rows past the dimension dropped, shared strings
with openpyxl's ``x005F_`` quirk) for the cells it understands: shared, inline and formula
strings, booleans and empty cells. Anything else (a number, which openpyxl may turn into a
date through the styles; an error or date cell; a strict-OOXML namespace; a part that is not
where the relationships say; a malformed file) makes it return ``None``, and the caller reads
the workbook with openpyxl instead, so the rare workbook outside this subset gets openpyxl's
values and error messages unchanged.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_DOC_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_CELL = re.compile(r"^([A-Z]{1,3})([1-9][0-9]*)$")
_RANGE = re.compile(r"^([A-Z]{1,3})([1-9][0-9]*)(?::([A-Z]{1,3})([1-9][0-9]*))?$")

Row = tuple[Any, ...]


class Unsupported(Exception):
    """The workbook is outside what :func:`read_sheet` reproduces exactly."""


def _column(letters: str) -> int:
    number = 0
    for ch in letters:
        number = number * 26 + ord(ch) - 64
    return number


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _text(node: ElementTree.Element) -> str:
    """Plain text of a string item (``<si>`` or ``<is>``): its own ``<t>`` (the last one, as
    openpyxl keeps) then each rich run's ``<t>``; phonetic runs are not text."""
    plain: str | None = None
    runs: list[str] = []
    for child in node:
        tag = _local(child.tag)
        if tag == "t":
            plain = child.text
        elif tag == "r":
            run: str | None = None
            for part in child:
                if _local(part.tag) == "t":
                    run = part.text
            if run is not None:
                runs.append(run)
    return "".join(([plain] if plain is not None else []) + runs)


def _parse(archive: zipfile.ZipFile, name: str) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(archive.read(name))
    except KeyError:
        raise Unsupported(f"no part {name}") from None


def _targets(archive: zipfile.ZipFile, part: str) -> dict[str, tuple[str, str]]:
    """Relationship id -> (type, zip member) of ``part``'s relationships."""
    folder, base = posixpath.split(part)
    root = _parse(archive, posixpath.join(folder, "_rels", base + ".rels"))
    out = {}
    for rel in root.iter(_REL + "Relationship"):
        target = rel.get("Target", "")
        member = target[1:] if target.startswith("/") else posixpath.normpath(
            posixpath.join(folder, target))
        out[rel.get("Id", "")] = (rel.get("Type", ""), member)
    return out


def _workbook_part(archive: zipfile.ZipFile) -> str:
    """The workbook part, found by the package relationships and declared as a workbook in
    ``[Content_Types].xml`` (openpyxl refuses a package without that declaration)."""
    types = _parse(archive, "[Content_Types].xml")
    declared = {o.get("PartName", ""): o.get("ContentType", "") for o in types
                if _local(o.tag) == "Override"}
    for kind, member in _targets(archive, "").values():
        if kind.endswith("/officeDocument") and declared.get("/" + member, "").endswith(
                ".main+xml"):
            return member
    raise Unsupported("no workbook part")


def _shared_strings(archive: zipfile.ZipFile, rels: dict[str, tuple[str, str]]) -> list[str]:
    for kind, member in rels.values():
        if kind.endswith("/sharedStrings"):
            root = _parse(archive, member)
            return [_text(si).replace("x005F_", "") for si in root.iter(MAIN + "si")]
    return []


def _cell_value(cell: ElementTree.Element, strings: list[str]) -> Any:
    kind = cell.get("t", "n")
    if kind == "inlineStr":
        item = cell.find(MAIN + "is")
        return None if item is None else _text(item)
    value = cell.findtext(MAIN + "v", None) or None
    if value is None:
        return None
    if kind == "s":
        index = int(value)
        if not 0 <= index < len(strings):
            raise Unsupported(f"shared string {index} out of range")
        return strings[index]
    if kind == "str":
        return value
    if kind == "b":
        return bool(int(value))
    raise Unsupported(f"a cell of type {kind!r}")  # numbers (maybe dates), errors, dates


def _dimension(root: ElementTree.Element) -> tuple[int, int] | None:
    """(max column, max row) of the ``<dimension>`` before ``<sheetData>``, as openpyxl reads
    it; None when there is none."""
    for child in root:
        tag = child.tag
        if tag == MAIN + "sheetData":
            return None
        if tag == MAIN + "dimension":
            match = _RANGE.match(child.get("ref", ""))
            if not match:
                raise Unsupported(f"dimension {child.get('ref')!r}")
            col, row = match.group(3) or match.group(1), match.group(4) or match.group(2)
            return _column(col), int(row)
    return None


def _parsed_rows(root: ElementTree.Element, strings: list[str]
                 ) -> list[tuple[int, list[tuple[int, Any]]]]:
    """(row number, [(column, value)]) of each ``<row>``, numbered as openpyxl numbers them."""
    data = root.find(MAIN + "sheetData")
    rows: list[tuple[int, list[tuple[int, Any]]]] = []
    number = 0
    for row in () if data is None else data.iter(MAIN + "row"):
        r = row.get("r")
        if r is not None:
            if not r.isdigit():
                raise Unsupported(f"row number {r!r}")
            number = int(r)
        else:
            number += 1
        column = 0
        cells = []
        for cell in row:
            if cell.tag != MAIN + "c":
                raise Unsupported(f"a {cell.tag} in a row")
            ref = cell.get("r")
            if ref:
                match = _CELL.match(ref)
                if not match:
                    raise Unsupported(f"cell reference {ref!r}")
                column = _column(match.group(1))
            else:
                column += 1
            cells.append((column, _cell_value(cell, strings)))
        rows.append((number, cells))
    return rows


def _rows(root: ElementTree.Element, strings: list[str]) -> list[Row]:
    dimension = _dimension(root)
    max_col, max_row = dimension if dimension is not None else (None, None)
    empty: Row = (None,) * max_col if max_col is not None else ()
    out: list[Row] = []
    counter = last = 1
    for last, cells in _parsed_rows(root, strings):
        if max_row is not None and last > max_row:
            break
        while counter < last:  # rows absent from the file
            counter += 1
            out.append(empty)
        if counter > last:  # a row number that goes back is skipped
            continue
        counter += 1
        width = max_col or (cells[-1][0] if cells else 0)
        values: list[Any] = [None] * width
        for column, value in cells:
            if 1 <= column <= width:
                values[column - 1] = value
        out.append(tuple(values))
    if max_row is not None and max_row < last:
        out += [empty] * (max_row + 1 - counter)
    return out


def read_sheet(path: Path, sheet: str) -> list[Row] | None:
    """The rows of ``sheet`` as openpyxl's read-only ``iter_rows(values_only=True)`` gives them,
    or None if the workbook is outside what this reader reproduces exactly (the sheet missing,
    a number cell, a malformed part...): read it with openpyxl then."""
    try:
        with zipfile.ZipFile(path) as archive:
            part = _workbook_part(archive)
            rels = _targets(archive, part)
            workbook = _parse(archive, part)
            if workbook.tag != MAIN + "workbook":
                raise Unsupported("not a transitional SpreadsheetML workbook")
            sheets = {s.get("name"): s.get(_DOC_REL + "id") for s in
                      workbook.iter(MAIN + "sheet")}
            target = sheets.get(sheet)
            if target is None or target not in rels:
                raise Unsupported(f"no sheet {sheet!r}")
            kind, member = rels[target]
            if not kind.endswith("/worksheet"):
                raise Unsupported(f"{sheet!r} is not a worksheet")
            strings = _shared_strings(archive, rels)
            return _rows(_parse(archive, member), strings)
    except (Unsupported, OSError, zipfile.BadZipFile, ElementTree.ParseError, ValueError,
            RuntimeError, EOFError):
        return None
