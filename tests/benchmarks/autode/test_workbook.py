"""The standard-library sheet reader gives openpyxl's rows exactly, or declines (None)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from support import data
from support.data import needs

from toolscore.benchmarks.autode.apidocs import API_SHEET, load_api_docs
from toolscore.benchmarks.autode.workbook import read_sheet

openpyxl = pytest.importorskip("openpyxl")
DATA = data.path("autode")

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PKG = "http://schemas.openxmlformats.org/package/2006/relationships"


def by_openpyxl(path: Path, sheet: str) -> list[tuple]:
    workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        return [tuple(r) for r in workbook[sheet].iter_rows(values_only=True)]
    finally:
        workbook.close()


def write_xlsx(path: Path, sheet_data: str, *, dimension: str | None = "A1:C3",
               strings: list[str] = (), name: str = "Sheet A") -> Path:
    """A minimal workbook written by hand, so every odd corner of the format can be set."""
    sst = "".join(s if s.startswith("<si>") else f"<si><t xml:space=\"preserve\">{s}</t></si>"
                  for s in strings)
    dim = f'<dimension ref="{dimension}"/>' if dimension else ""
    parts = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats'
            '.org/package/2006/content-types"><Default Extension="rels" ContentType="application'
            '/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
            'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType='
            '"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.'
            'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName='
            '"/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument'
            '.spreadsheetml.sharedStrings+xml"/></Types>'),
        "_rels/.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{PKG}"><Relationship '
            f'Id="rId1" Type="{REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>'),
        "xl/workbook.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{MAIN}" xmlns:r="{REL}">'
            f'<sheets><sheet name="{name}" sheetId="1" r:id="rId1"/></sheets></workbook>'),
        "xl/_rels/workbook.xml.rels": (
            f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{PKG}"><Relationship '
            f'Id="rId1" Type="{REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship '
            f'Id="rId2" Type="{REL}/sharedStrings" Target="/xl/sharedStrings.xml"/>'
            '</Relationships>'),
        "xl/sharedStrings.xml": (f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{MAIN}">'
                                 f'{sst}</sst>'),
        "xl/worksheets/sheet1.xml": (
            f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{MAIN}">{dim}<sheetData>'
            f'{sheet_data}</sheetData></worksheet>'),
    }
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in parts.items():
            archive.writestr(member, text)
    return path


@needs("autode")
@pytest.mark.parametrize("sheet", [API_SHEET, "API list"])
def test_released_workbook_same_rows_as_openpyxl(sheet: str) -> None:
    rows = read_sheet(DATA / "API_list.xlsx", sheet)
    assert rows is not None and len(rows) == 67 + (sheet == "API list")
    assert rows == by_openpyxl(DATA / "API_list.xlsx", sheet)


@pytest.mark.parametrize("dimension", ["A1:C3", "A1:B2", "A1:E6", "B2", None])
def test_odd_sheets_same_rows_as_openpyxl(tmp_path: Path, dimension: str | None) -> None:
    # rows 2 and 5 absent, cells without references, a skipped column, rich text with a
    # phonetic run (not text), an inline string, a formula's cached string, booleans, an empty
    # <v>, openpyxl's x005F_ quirk, a row number that goes back, a cell past the dimension.
    rich = ("<si><r><t>ri</t></r><r><rPr><b/></rPr><t xml:space=\"preserve\">ch </t></r>"
            "<rPh sb=\"0\" eb=\"1\"><t>PHON</t></rPh></si>")
    data = ('<row r="1"><c r="A1" t="s"><v>0</v></c><c t="s"><v>1</v></c>'
            '<c r="D1" t="b"><v>1</v></c></row>'
            '<row r="3"><c r="C3" t="inlineStr"><is><t>inline</t></is></c>'
            '<c r="A3" t="s"><v>2</v></c></row>'
            '<row><c t="str"><f>A1</f><v>cached</v></c><c t="b"><v>0</v></c>'
            '<c t="s"><v></v></c></row>'
            '<row r="2"><c r="A2" t="s"><v>0</v></c></row>'
            '<row r="6"><c r="F6" t="s"><v>3</v></c></row>')
    path = write_xlsx(tmp_path / "odd.xlsx", data, dimension=dimension,
                      strings=["head", "a_x005F_x000D_b", rich, " spaced "])
    rows = read_sheet(path, "Sheet A")
    assert rows is not None
    assert [tuple(r) for r in rows] == by_openpyxl(path, "Sheet A")


def test_declines_what_it_does_not_reproduce(tmp_path: Path) -> None:
    number = write_xlsx(tmp_path / "n.xlsx", '<row r="1"><c r="A1"><v>1.5</v></c></row>')
    assert read_sheet(number, "Sheet A") is None  # a number may be a date through the styles
    assert by_openpyxl(number, "Sheet A")[0][0] == 1.5
    assert read_sheet(number, "Other") is None
    bad_index = write_xlsx(tmp_path / "i.xlsx", '<row r="1"><c r="A1" t="s"><v>7</v></c></row>')
    assert read_sheet(bad_index, "Sheet A") is None
    (tmp_path / "junk.xlsx").write_bytes(b"PK\x03\x04 not really")
    assert read_sheet(tmp_path / "junk.xlsx", "Sheet A") is None
    with zipfile.ZipFile(number) as src, zipfile.ZipFile(tmp_path / "untyped.xlsx", "w") as dst:
        for item in src.infolist():
            if item.filename != "[Content_Types].xml":
                dst.writestr(item, src.read(item))
    assert read_sheet(tmp_path / "untyped.xlsx", "Sheet A") is None


def test_api_documents_from_either_reader(tmp_path: Path) -> None:
    """A workbook the reader declines (a number in an unused column) still loads, through
    openpyxl, to the same documents."""
    header = "".join(f'<c t="inlineStr"><is><t>{h}</t></is></c>' for h in (
        "domain", "subdomain", "function", "api", "description", "parameters"))
    api = "".join(f'<c t="inlineStr"><is><t>{v}</t></is></c>' for v in (
        "D", "S", "F", "Api", "Does things.", "x: X, including a or b (required slot)"))
    plain = write_xlsx(tmp_path / "a.xlsx", f'<row>{header}</row><row>{api}</row>',
                       dimension=None, name=API_SHEET)
    mixed = write_xlsx(tmp_path / "b.xlsx", f'<row>{header}</row><row>{api}<c><v>3</v></c>'
                       '</row>', dimension=None, name=API_SHEET)
    assert read_sheet(plain, API_SHEET) is not None and read_sheet(mixed, API_SHEET) is None
    (a,), (b,) = load_api_docs(plain), load_api_docs(mixed)
    assert a == b and a.spec.parameters["properties"]["x"]["enum"] == ["a", "b"]
