"""Reading ``pytorch_model.bin`` without torch: against what ``torch.save`` wrote, and refusing
what a weights file has no business naming."""

from __future__ import annotations

import io
import json
import pickle
import pickletools
import zipfile
from pathlib import Path

import numpy as np
import pytest

from toolscore.embed.distilbert import DistilBertEncoder
from toolscore.embed.minilm import ModelFormatError
from toolscore.embed.torch_checkpoint import CheckpointError, read_torch_checkpoint

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sent2vec_distilbert"


@pytest.mark.parametrize("name", ["checkpoint.bin", "checkpoint_legacy.bin"])
def test_tensors_equal_what_torch_saved(name: str) -> None:
    expected = json.loads((FIXTURES / "checkpoint.json").read_text())
    tensors = read_torch_checkpoint(FIXTURES / name)
    assert list(tensors) == list(expected)
    for name, want in expected.items():
        got = tensors[name]
        assert str(got.dtype) == want["dtype"] and list(got.shape) == want["shape"], name
        assert np.array_equal(got.reshape(-1), np.array(want["values"], dtype=got.dtype)), name
    # Views of one storage come out as arrays of their own, not aliases of each other.
    assert np.array_equal(tensors["transposed"], tensors["base"].T)
    tensors["base"][0, 0] = 99.0
    assert tensors["transposed"][0, 0] != 99.0


def _archive(path: Path, payload: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("model/data.pkl", payload)
    return path


def test_a_file_naming_other_callables_is_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command = f"touch {marker}".encode()
    # {"w": os.system(command)} as opcodes: what unpickling with pickle would run
    payload = (b"\x80\x02}X\x01\x00\x00\x00wcos\nsystem\nX"
               + len(command).to_bytes(4, "little") + command + b"\x85Rs.")
    opcodes = [(op.name, arg) for op, arg, _ in pickletools.genops(payload)]
    assert ("GLOBAL", "os system") in opcodes and ("REDUCE", None) in opcodes
    path = _archive(tmp_path / "evil.bin", payload)
    with pytest.raises(CheckpointError, match=r"evil.bin: refers to os.system"):
        read_torch_checkpoint(path)
    assert not marker.exists()


def test_other_files_are_refused_in_one_line(tmp_path: Path) -> None:
    other = tmp_path / "other.bin"
    other.write_bytes(pickle.dumps(7, protocol=2) * 3)
    with pytest.raises(CheckpointError, match=r"other.bin: neither a zip archive nor torch"):
        read_torch_checkpoint(other)
    legacy = (FIXTURES / "checkpoint_legacy.bin").read_bytes()
    (tmp_path / "short.bin").write_bytes(legacy[:-3])
    with pytest.raises(CheckpointError, match=r"short.bin: storage \d+ is cut short"):
        read_torch_checkpoint(tmp_path / "short.bin")
    with pytest.raises(CheckpointError, match=r"cut.bin: unreadable checkpoint"):
        read_torch_checkpoint(_archive(tmp_path / "cut.bin", b"\x80\x02"))  # a pickle cut short
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a/data.pkl", b"")
        archive.writestr("b/data.pkl", b"")
    (tmp_path / "two.bin").write_bytes(buffer.getvalue())
    with pytest.raises(CheckpointError, match="expected one data.pkl, found 2"):
        read_torch_checkpoint(tmp_path / "two.bin")


def test_the_encoder_reads_pytorch_model_bin_when_there_is_no_safetensors(
        tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": "distilbert", "activation": "gelu", "dim": 4, "n_layers": 1,
         "n_heads": 1, "max_position_embeddings": 8}))
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n")
    (tmp_path / "pytorch_model.bin").write_bytes((FIXTURES / "checkpoint.bin").read_bytes())
    with pytest.raises(ModelFormatError, match=r"pytorch_model.bin: tensor "
                       r"'embeddings.word_embeddings.weight' missing"):
        DistilBertEncoder(tmp_path)
