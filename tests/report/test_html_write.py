"""Writing the HTML report fast without changing what it says: the record blocks' encoder, the
overview handed back to ``report --html``, and the garbage collector left as it was found."""

from __future__ import annotations

import base64
import gc
import gzip
import json
from pathlib import Path

import pytest

from toolscore.records import RunStore
from toolscore.report.html.page import build_page, write_report
from toolscore.report.html.samples import dumps, encode, pack, page_bodies
from toolscore.report.overview import run_overview
from toolscore.runs.api import evaluate


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("runs") / "demo"
    evaluate("demo", "oracle", cache=None, out=path, embedder="hashing")
    return path


def _unpack(block: str) -> list[object]:
    return json.loads(gzip.decompress(base64.b64decode(block)))


def test_blocks_read_back_as_the_standard_library_writes_them() -> None:
    bodies = [{"scores": [["success", "True"]], "error": None,
               "view": {"text": "héllo \u2028 </script> \x1b[31m 🙂", "n": [1, 2.5, 10**30],
                        "t": (1, 2), "odd": Path("x")}}]
    assert _unpack(pack(bodies)) == json.loads(dumps(bodies))
    assert encode(bodies).decode("utf-8")  # UTF-8, not only ASCII: the script reads UTF-8


def test_nan_and_lone_surrogates_take_the_standard_path() -> None:
    """JSON has no NaN: the block spells it as text, as before; a lone surrogate (which UTF-8
    cannot carry) is written with an ASCII escape."""
    nan = [{"view": {"x": float("nan"), "y": [float("inf")]}}]
    assert encode(nan) == dumps(nan).encode("ascii")
    assert _unpack(pack(nan)) == [{"view": {"x": "nan", "y": ["inf"]}}]
    lone = [{"view": {"text": "a\ud800b"}}]
    assert encode(lone) == dumps(lone).encode("ascii")
    assert _unpack(pack(lone)) == [{"view": {"text": "a\ud800b"}}]
    mention = [{"view": {"text": "NaN is not a number"}}]  # only slower: same text back
    assert _unpack(pack(mention)) == mention


def test_write_report_returns_the_run_overview(demo_run: Path, tmp_path: Path) -> None:
    page, doc = write_report(demo_run, tmp_path / "r.html", n_resamples=200, seed=3)
    assert json.dumps(doc, sort_keys=True) == json.dumps(
        run_overview(demo_run, n_resamples=200, seed=3), sort_keys=True)
    bodies = page_bodies(page.read_text(encoding="utf-8"))
    assert len(bodies) == len(RunStore(demo_run).latest())


def test_the_collector_is_paused_only_while_reading(demo_run: Path) -> None:
    assert gc.isenabled()
    seen = []
    real = gc.disable

    def spy() -> None:
        seen.append(True)
        real()

    gc.disable = spy  # type: ignore[assignment]
    try:
        build_page(demo_run, n_resamples=50)
    finally:
        gc.disable = real  # type: ignore[assignment]
    assert seen and gc.isenabled()
    gc.disable()
    try:  # a caller that had paused it finds it still paused
        build_page(demo_run, n_resamples=50)
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ValueError):  # and an error on the way restores it too
        build_page(demo_run, n_resamples=0)
    with pytest.raises(ValueError):
        run_overview(demo_run, n_resamples=0)
    assert gc.isenabled()


def test_nan_scores_stay_readable(demo_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "nan"
    src, dst = RunStore(demo_run), RunStore(run)
    dst.write_config(src.read_config())
    for r in src.latest().values():
        r["scores"]["weird"] = float("nan")
        dst.append(r)
    page, _ = write_report(run, tmp_path / "nan.html", n_resamples=50)
    bodies = page_bodies(page.read_text(encoding="utf-8"))
    assert all(["weird", "nan"] in b["scores"] for b in bodies)
