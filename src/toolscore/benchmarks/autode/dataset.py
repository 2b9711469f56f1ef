"""AutoDE's released data: the files of hlmu/AutoDE at a pinned commit, each checked by its
sha256 (:data:`toolscore.data_pins.AUTODE`)."""

from toolscore import data_pins
from toolscore.data import DatasetSource

SOURCE = DatasetSource(
    name="autode", url="https://github.com/hlmu/AutoDE/archive/952086b.zip",
    marker="data_v1_2.jsonl", pins=data_pins.AUTODE, sources=data_pins.AUTODE_SOURCE)
