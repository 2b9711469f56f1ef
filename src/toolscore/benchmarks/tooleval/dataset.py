"""ToolEval's released data: the files of OpenBMB/ToolBench at a pinned commit, each checked by
its sha256 (:data:`toolscore.data_pins.TOOLEVAL`), with the evaluator's source files."""

from toolscore import data_pins
from toolscore.data import DatasetSource

SOURCE = DatasetSource(
    name="tooleval", url="https://github.com/OpenBMB/ToolBench/archive/d56fdd8.zip",
    marker="converted", pins=data_pins.TOOLEVAL, sources=data_pins.TOOLEVAL_SOURCE)
