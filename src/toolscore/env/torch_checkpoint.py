"""The tensors of a ``pytorch_model.bin`` as numpy arrays, without torch and without running
anything the file names.

Model folders made before safetensors hold their weights only as ``torch.save`` output: a zip
archive with a pickle (``data.pkl``) describing each tensor (a storage, an offset, a shape,
strides) and one raw little-endian file per storage (``data/<key>``). Unpickling such a file
with ``pickle`` would run whatever callables it names, so this reader resolves only the few
names a state dict uses (an ordered dict, the tensor rebuild functions, the storage types) and
refuses any other. The pre-2020 format (not a zip archive) is refused with the way out.
"""

from __future__ import annotations

import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

#: torch's storage types, by the name the pickle gives them, as numpy dtypes.
STORAGE_DTYPES = {"FloatStorage": "<f4", "HalfStorage": "<f2", "DoubleStorage": "<f8",
                  "LongStorage": "<i8", "IntStorage": "<i4", "ShortStorage": "<i2",
                  "CharStorage": "i1", "ByteStorage": "u1", "BoolStorage": "?"}


class CheckpointError(ValueError):
    """Not a checkpoint this reader can read; the message names the file and why."""


class _StorageType:
    def __init__(self, name: str) -> None:
        self.dtype = np.dtype(STORAGE_DTYPES[name])


def _rebuild_tensor(storage: np.ndarray, offset: int, size: tuple[int, ...],
                    stride: tuple[int, ...], *_ignored: Any) -> np.ndarray:
    """A tensor is a strided view into its storage (counted in elements)."""
    if not size:
        return np.array(storage[offset])
    needed = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True)) + 1
    if min(size) > 0 and needed > storage.size:
        raise CheckpointError(f"a tensor of shape {size} runs past its storage")
    item = storage.itemsize
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=size,
                                           strides=[s * item for s in stride])
    return np.array(view)  # its own memory: a view may overlap others of the same storage


def _rebuild_parameter(data: np.ndarray, *_ignored: Any) -> np.ndarray:
    return data


_ALLOWED = {("collections", "OrderedDict"): OrderedDict,
            ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
            ("torch._utils", "_rebuild_parameter"): _rebuild_parameter}


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: Any, archive: zipfile.ZipFile, root: str, path: Path) -> None:
        super().__init__(file)
        self.archive, self.root, self.path = archive, root, path
        self.storages: dict[str, np.ndarray] = {}

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" and name in STORAGE_DTYPES:
            return _StorageType(name)
        found = _ALLOWED.get((module, name))
        if found is None:
            raise CheckpointError(f"{self.path}: refers to {module}.{name}, which a weights "
                                  "file does not need: not read")
        return found

    def persistent_load(self, pid: Any) -> np.ndarray:
        if not (isinstance(pid, tuple) and pid and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise CheckpointError(f"{self.path}: unknown storage reference {pid!r:.80}")
        kind, key = pid[1], str(pid[2])
        if key not in self.storages:
            raw = self.archive.read(f"{self.root}/data/{key}")
            self.storages[key] = np.frombuffer(raw, dtype=kind.dtype)
        return self.storages[key]


def read_torch_checkpoint(path: Path) -> dict[str, np.ndarray]:
    """The state dict in ``path`` (``torch.save``'s zip format) as name -> array."""
    path = Path(path)
    if not zipfile.is_zipfile(path):
        raise CheckpointError(f"{path}: not a zip archive (torch.save's format before torch "
                              "1.6, or not a checkpoint): convert it to model.safetensors")
    try:
        with zipfile.ZipFile(path) as archive:
            pickles = [n for n in archive.namelist() if n.endswith("/data.pkl")]
            if len(pickles) != 1:
                raise CheckpointError(f"{path}: expected one data.pkl, found {len(pickles)}")
            root = pickles[0].removesuffix("/data.pkl")
            if f"{root}/byteorder" in archive.namelist() and archive.read(
                    f"{root}/byteorder").strip() != b"little":
                raise CheckpointError(f"{path}: big-endian storages are not supported")
            with archive.open(pickles[0]) as f:
                state = _Unpickler(f, archive, root, path).load()
    except (KeyError, OSError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile,
            TypeError, ValueError) as e:
        if isinstance(e, CheckpointError):
            raise
        raise CheckpointError(f"{path}: unreadable checkpoint ({e})") from None
    if not isinstance(state, dict) or not all(isinstance(v, np.ndarray) for v in state.values()):
        raise CheckpointError(f"{path}: not a state dict of tensors")
    return dict(state)
