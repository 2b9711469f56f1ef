"""``toolscore tooltalk replay DIR`` without ``--data``: a prediction folder holds no databases.

The replay needs the dataset the run was made on. Found locally ($TOOLSCORE_DATA, the user
cache) it is used; otherwise the command downloads nothing and says, in one line, to pass
``--data`` first, then how else to provide the dataset.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import assert_user_error, toolscore


def _predictions(folder: Path) -> Path:
    """A one-conversation ToolTalk prediction folder (nothing else beside it)."""
    folder.mkdir(parents=True)
    turns = [{"role": "user", "text": "weather?"},
             {"role": "assistant", "text": "sunny", "predictions": [
                 {"role": "api", "request": {"api_name": "CurrentWeather",
                                             "parameters": {"location": "Springfield"}},
                  "response": {"weather": {"conditions": "Sunny"}}, "exception": None},
                 {"role": "assistant", "text": "sunny"}]}]
    (folder / "toy.json").write_text(json.dumps({
        "name": "toy", "conversation_id": "1", "suites_used": ["Weather"],
        "apis_used": ["CurrentWeather"], "user": {"username": "amy"},
        "metadata": {"timestamp": "2023-05-01 08:00:00"}, "conversation": turns}))
    return folder


def _world(root: Path) -> Path:
    """A ToolTalk dataset folder of our own: one account, one city."""
    (root / "databases").mkdir(parents=True)
    databases = {
        "Account": {"amy": {"username": "amy", "email": "a@x.org", "phone": "555-000-1111",
                            "name": "Amy", "password": "pw", "session_token": None}},
        "Weather": {"springfield": {"2023-05-01": {"conditions": "Sunny"}}},
        "HistoricWeather": {},
    }
    for name, db in databases.items():
        (root / "databases" / f"{name}.json").write_text(json.dumps(db))
    return root


def _offline(tmp_path: Path, data_root: Path) -> dict[str, str]:
    """Nothing to find in $TOOLSCORE_DATA or the (per-test) user cache, and any download
    attempt would fail at once instead of reaching the network."""
    return {"TOOLSCORE_DATA": str(data_root), "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9",
            "https_proxy": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}


def test_replay_without_data_names_the_data_option_first(tmp_path):
    _predictions(tmp_path / "run")
    (tmp_path / "empty").mkdir()
    done = toolscore("tooltalk", "replay", "run", cwd=tmp_path,
                     env=_offline(tmp_path, tmp_path / "empty"))
    assert_user_error(done, "no ToolTalk dataset to replay against: pass --data DIR with the "
                            "ToolTalk dataset folder")
    line = done.stderr.strip()
    assert line.index("--data DIR") < line.index("toolscore data tooltalk") < line.index(
        "TOOLSCORE_DATA")
    assert "download " not in line.replace("download it once", "")  # none was attempted
    assert not (tmp_path / "cache" / "toolscore").exists()


def test_replay_finds_the_dataset_through_toolscore_data_or_takes_data(tmp_path):
    _predictions(tmp_path / "run")
    world = _world(tmp_path / "datasets" / "tooltalk")
    found = toolscore("tooltalk", "replay", "run", "--json", cwd=tmp_path,
                      env=_offline(tmp_path, tmp_path / "datasets"))
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["identical"] == 1
    given = toolscore("tooltalk", "replay", "run", "--data", str(world), "--json", cwd=tmp_path,
                      env=_offline(tmp_path, tmp_path / "nowhere"))
    assert given.returncode == 0, given.stderr
    assert json.loads(given.stdout)["calls"] == 1
    assert_user_error(toolscore("tooltalk", "replay", "run", "--data", "run", cwd=tmp_path,
                                env=_offline(tmp_path, tmp_path / "datasets")),
                      "--data run: no tooltalk dataset there")
