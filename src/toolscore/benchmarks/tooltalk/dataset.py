"""ToolTalk's released data: the ``data`` folder of microsoft/ToolTalk at a pinned commit,
checked by a content checksum, with the source files its default mode reads its wording from
(each checked by its sha256)."""

from __future__ import annotations

from toolscore.data import DatasetSource

# ToolTalk's own source files that its default mode reads at run time (the runner's system
# prompt, the tools' documents: toolscore.benchmarks.tooltalk.release), kept beside the data.
TOOLTALK_SOURCE: dict[str, str] = {
    "src/tooltalk/apis/__init__.py":
        "43ae601525f9f871ec4c0abbded3f033e19bfb37c9ba3bc7e45ff24a4b87459a",
    "src/tooltalk/apis/account.py":
        "a5046c283c05825794e7a072cd73e670bf1292336689adfb3fbbf4d6997ab537",
    "src/tooltalk/apis/alarm.py":
        "1d210979f13843794658982db2c2590a8b44b2c5c000f5d52bdf7110a407d503",
    "src/tooltalk/apis/calendar.py":
        "9e94031ceaa401ba949476b4517078a12e5930f8aba5ee1db574682d2296556d",
    "src/tooltalk/apis/email.py":
        "a5872b60408fe2f8d95284415c0ffcaba4aac477bf6b12c7d78c3bc00b4ba414",
    "src/tooltalk/apis/message.py":
        "8cad12aec95c6befd7aefe0f938918d42a3b2d642eaedd8e142a3993db8118b8",
    "src/tooltalk/apis/reminder.py":
        "0b60d01b00e69ed90777bb343b2742a19d4fa582fb4705a5833e3730c84e05d0",
    "src/tooltalk/apis/weather.py":
        "329c94ad88ced915649918adc2632fa5e716ab8e440e9439684979bb28f354d5",
    "src/tooltalk/evaluation/evaluate_openai.py":
        "c53ddeeb09a39aea062c1f46d609e50388f2020fc0785aee5ea46891c52590ce",
}

SOURCE = DatasetSource(
    name="tooltalk",
    url="https://github.com/microsoft/ToolTalk/archive/e05f4ce.zip",
    subdir="data",
    sha256="cdce643e7c4beccc198f7bb41483ff0ca8966b0aa41841b9ae799cd03ec99cbc",
    files=("databases/*.json", "easy/*.json", "tooltalk/*.json"),
    marker="databases/Account.json",
    sources=TOOLTALK_SOURCE,
)
