"""The tensors of a ``pytorch_model.bin`` as numpy arrays, without torch and without running
anything the file names.

Model folders made before safetensors hold their weights only as ``torch.save`` output, in one
of two layouts: since torch 1.6 a zip archive with a pickle (``data.pkl``) describing each
tensor (a storage, an offset, a shape, strides) and one raw little-endian file per storage
(``data/<key>``); before it (the layout of many files on the hub saved in 2019-2020) a stream
of pickles - a magic number, a protocol version, the system's description, the tensors'
description, the list of storage keys - followed by each storage's element count and bytes.
Unpickling either with ``pickle`` would run whatever callables it names, so this reader
resolves only the few names a state dict uses (an ordered dict, the tensor rebuild functions,
the storage types) and refuses any other file.
"""

from __future__ import annotations

import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import IO, Any

import numpy as np

#: torch's storage types, by the name the pickle gives them, as numpy dtypes.
STORAGE_DTYPES = {"FloatStorage": "<f4", "HalfStorage": "<f2", "DoubleStorage": "<f8",
                  "LongStorage": "<i8", "IntStorage": "<i4", "ShortStorage": "<i2",
                  "CharStorage": "i1", "ByteStorage": "u1", "BoolStorage": "?"}
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


class CheckpointError(ValueError):
    """Not a checkpoint this reader can read; the message names the file and why."""


class _StorageType:
    def __init__(self, name: str) -> None:
        self.dtype = np.dtype(STORAGE_DTYPES[name])


class _Storage:
    """A storage whose bytes may come after the pickle that refers to it (the old layout)."""

    def __init__(self, dtype: np.dtype, numel: int) -> None:
        self.dtype, self.numel = dtype, numel
        self.data: np.ndarray | None = None


class _Tensor:
    """A tensor to cut from its storage once every storage has its bytes."""

    def __init__(self, storage: _Storage, offset: int, size: tuple[int, ...],
                 stride: tuple[int, ...], *_ignored: Any) -> None:
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride

    def array(self) -> np.ndarray:
        data = self.storage.data
        if data is None:
            raise CheckpointError("a tensor's storage has no data")
        if not self.size:
            return np.array(data[self.offset])
        last = self.offset + sum((n - 1) * s for n, s in zip(self.size, self.stride,
                                                             strict=True))
        if min(self.size) > 0 and last >= data.size:
            raise CheckpointError(f"a tensor of shape {self.size} runs past its storage")
        view = np.lib.stride_tricks.as_strided(data[self.offset:], shape=self.size,
                                               strides=[s * data.itemsize for s in self.stride])
        return np.array(view)  # its own memory: views of one storage may overlap


def _parameter(data: _Tensor, *_ignored: Any) -> _Tensor:
    return data


_ALLOWED = {("collections", "OrderedDict"): OrderedDict,
            ("torch._utils", "_rebuild_tensor_v2"): _Tensor,
            ("torch._utils", "_rebuild_tensor"): _Tensor,
            ("torch._utils", "_rebuild_parameter"): _parameter}


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: IO[bytes], path: Path) -> None:
        super().__init__(file)
        self.path = path
        self.storages: dict[str, _Storage] = {}

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" and name in STORAGE_DTYPES:
            return _StorageType(name)
        found = _ALLOWED.get((module, name))
        if found is None:
            raise CheckpointError(f"{self.path}: refers to {module}.{name}, which a weights "
                                  "file does not need: not read")
        return found

    def persistent_load(self, pid: Any) -> _Storage:
        # ("storage", type, key, location, numel[, view]): a view into another storage is
        # an old-layout feature state dicts do not use.
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType) and (len(pid) == 5 or pid[5] is None)):
            raise CheckpointError(f"{self.path}: unsupported storage reference {pid!r:.80}")
        key = str(pid[2])
        if key not in self.storages:
            self.storages[key] = _Storage(pid[1].dtype, int(pid[4]))
        return self.storages[key]


def _from_zip(path: Path) -> tuple[Any, dict[str, _Storage]]:
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        pickles = [n for n in names if n.endswith("/data.pkl")]
        if len(pickles) != 1:
            raise CheckpointError(f"{path}: expected one data.pkl, found {len(pickles)}")
        root = pickles[0].removesuffix("/data.pkl")
        if f"{root}/byteorder" in names and archive.read(f"{root}/byteorder") != b"little":
            raise CheckpointError(f"{path}: big-endian storages are not supported")
        with archive.open(pickles[0]) as f:
            unpickler = _Unpickler(f, path)
            state = unpickler.load()
        for key, storage in unpickler.storages.items():
            storage.data = np.frombuffer(archive.read(f"{root}/data/{key}"), dtype=storage.dtype)
    return state, unpickler.storages


def _from_stream(path: Path) -> tuple[Any, dict[str, _Storage]]:
    with open(path, "rb") as f:
        header = [_Unpickler(f, path).load() for _ in range(3)]
        if header[0] != LEGACY_MAGIC or not isinstance(header[2], dict):
            raise CheckpointError(f"{path}: neither a zip archive nor torch.save's older "
                                  "format: not a checkpoint")
        if not header[2].get("little_endian", True):
            raise CheckpointError(f"{path}: big-endian storages are not supported")
        unpickler = _Unpickler(f, path)
        state = unpickler.load()
        for key in _Unpickler(f, path).load():
            storage = unpickler.storages[str(key)]
            numel = int.from_bytes(f.read(8), "little")
            raw = f.read(numel * storage.dtype.itemsize)
            if numel != storage.numel or len(raw) != numel * storage.dtype.itemsize:
                raise CheckpointError(f"{path}: storage {key} is cut short or mislabelled")
            storage.data = np.frombuffer(raw, dtype=storage.dtype)
    return state, unpickler.storages


def read_torch_checkpoint(path: Path) -> dict[str, np.ndarray]:
    """The state dict in ``path`` (either of ``torch.save``'s formats) as name -> array."""
    path = Path(path)
    try:
        state, _ = _from_zip(path) if zipfile.is_zipfile(path) else _from_stream(path)
        if not isinstance(state, dict) or not all(isinstance(v, _Tensor)
                                                  for v in state.values()):
            raise CheckpointError(f"{path}: not a state dict of tensors")
        return {str(k): v.array() for k, v in state.items()}
    except CheckpointError as e:
        message = str(e)
        raise CheckpointError(message if message.startswith(str(path))
                              else f"{path}: {message}") from None
    except (KeyError, OSError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile,
            TypeError, ValueError, IndexError, AttributeError) as e:
        raise CheckpointError(f"{path}: unreadable checkpoint ({type(e).__name__}: "
                              f"{str(e)[:120]})") from None
