"""ToolTalk's released data: the ``data`` folder of microsoft/ToolTalk at a pinned commit,
checked by a content checksum, with the source files its default mode reads its wording from."""

from toolscore import data_pins
from toolscore.data import DatasetSource

SOURCE = DatasetSource(
    name="tooltalk",
    url="https://github.com/microsoft/ToolTalk/archive/e05f4ce.zip",
    subdir="data",
    sha256="cdce643e7c4beccc198f7bb41483ff0ca8966b0aa41841b9ae799cd03ec99cbc",
    files=("databases/*.json", "easy/*.json", "tooltalk/*.json"),
    marker="databases/Account.json",
    sources=data_pins.TOOLTALK_SOURCE,
)
