"""The TensorFlow that TFDS's builder code gets: file calls and dtypes, nothing else.

TFDS imports TensorFlow lazily, through one object: ``tensorflow_datasets.core.utils.
lazy_imports_utils.tensorflow`` (an ``etils.epy`` lazy module, resolved on first attribute
access; every builder module binds it as ``tf``). `install` resolves that object to `STANDIN`
instead, so ``tf.io.gfile.GFile(...)`` in a builder opens a file and nothing imports
TensorFlow. `sys.modules["tensorflow"]` is never touched: other libraries test for it (and
TFDS itself, to decide whether TensorFlow's types may appear, `dtype_utils`).

What the stand-in has, found by running TFDS's builders (see docs/tfds.md):

- ``tf.io.gfile``: ``GFile``/``Open`` (readable again after ``close``, as TensorFlow's),
  ``exists``, ``glob``, ``listdir``, ``isdir``,
  ``makedirs``, ``mkdir``, ``walk``, ``stat`` (``.length``), ``copy``, ``rename``, ``remove``,
  ``rmtree``; local paths, and ``scheme://`` URLs through fsspec when it is installed;
- the dtypes builders name in their features (``tf.int64``, ``tf.string``, ``tf.dtypes.X``,
  ``tf.dtypes.as_dtype``) as NumPy's (``tf.string``: ``object``, as TFDS's NumPy path has it);
- ``tf.compat.as_bytes`` / ``as_text`` / ``as_str``.

Any other attribute raises `TensorFlowNeededError` naming the call and the dataset
(``tfds:voc needs TensorFlow for tf.image.decode_image``): one line, never an import of
TensorFlow.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import shutil
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import numpy as np

from catalog.errors import MissingDependencyError

__all__ = ["STANDIN", "TensorFlowNeededError", "install", "running"]

#: The dataset whose builder code runs now (``tfds:mnist``), named in errors.
_RUNNING: contextvars.ContextVar[str] = contextvars.ContextVar("tfds_running", default="tfds")


class TensorFlowNeededError(MissingDependencyError):
    """A TFDS builder called a TensorFlow function catalog has no stand-in for."""


@contextlib.contextmanager
def running(name: str) -> Iterator[None]:
    """Name `name` (``tfds:mnist``) in the stand-in's errors while builder code runs."""
    token = _RUNNING.set(name)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # a generator closed in another context (a
            _RUNNING.reset(token)  # Beam worker's thread): that context never saw the name


class _Namespace(types.SimpleNamespace):
    """A part of the stand-in (``tf``, ``tf.io``, ...): its attributes, else one clear error."""

    def __init__(self, path: str, **attributes: Any) -> None:
        super().__init__(**attributes)
        object.__setattr__(self, "_path", path)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        call = f"{object.__getattribute__(self, '_path')}.{name}"
        raise TensorFlowNeededError(
            f"{_RUNNING.get()} needs TensorFlow for {call}, which catalog's TensorFlow-free "
            "runner of TFDS builders does not provide; this dataset cannot be prepared "
            "without TensorFlow yet"
        )


def _fs(path: str) -> Any:
    """The fsspec file system of a ``scheme://`` path (None for a local path)."""
    if "://" not in path or path.startswith("file://"):
        return None
    try:
        import fsspec
    except ImportError:
        raise MissingDependencyError(
            f"{path}: reading a URL from a TFDS builder needs fsspec; pip install fsspec"
        ) from None
    return fsspec.core.url_to_fs(path)[0]


def _local(path: Any) -> Path:
    return Path(os.fspath(path).removeprefix("file://"))


class _GFile:
    """``tf.io.gfile.GFile``: a file opened on first use, readable again after `close` (from
    its start, as TensorFlow's reopens it): builders hand a GFile to ``np.load`` inside a
    ``with`` and read the NpzFile it gives after the block closed the file."""

    def __init__(self, path: Any, mode: str = "r") -> None:
        self.name, self.mode = os.fspath(path), mode
        self._file: BinaryIO | TextIO | None = None
        if "w" in mode or "a" in mode:
            self._opened()  # a writer creates the file now

    def _opened(self) -> BinaryIO | TextIO:
        if self._file is None:
            self._file = _open(self.name, self.mode)
        return self._file

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._opened(), name)

    # named, not only reached through __getattr__: readers test ``"read" in dir(f)`` (scipy)
    def read(self, size: int = -1) -> Any:
        return self._opened().read(size)

    def readline(self, size: int = -1) -> Any:
        return self._opened().readline(size)

    def readlines(self) -> list[Any]:
        return self._opened().readlines()

    def write(self, data: Any) -> int:
        return self._opened().write(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._opened().seek(offset, whence)

    def tell(self) -> int:
        return self._opened().tell()

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def readable(self) -> bool:
        return "r" in self.mode or "+" in self.mode

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return any(c in self.mode for c in "wa+")

    def __iter__(self) -> _GFile:
        return self

    def __next__(self) -> Any:  # by readline, as TensorFlow's: the GFile, not only its
        line = self._opened().readline()  # file, is held while a loop reads it
        if not line:
            raise StopIteration
        return line

    def __enter__(self) -> _GFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __del__(self) -> None:  # ``GFile(path).read()`` never closes: TensorFlow's does not leak
        with contextlib.suppress(Exception):
            self.close()


def _open(path: Any, mode: str = "r") -> BinaryIO | TextIO:
    fs = _fs(os.fspath(path))
    if fs is not None:
        return fs.open(os.fspath(path), mode)  # type: ignore[no-any-return]
    if "b" not in mode:
        return _local(path).open(mode, encoding="utf-8")  # type: ignore[return-value]
    return _local(path).open(mode)  # type: ignore[return-value]


def _exists(path: Any) -> bool:
    fs = _fs(os.fspath(path))
    return bool(fs.exists(os.fspath(path))) if fs is not None else _local(path).exists()


def _glob_paths(pattern: Any) -> list[str]:
    fs = _fs(os.fspath(pattern))
    if fs is not None:
        return sorted(fs.glob(os.fspath(pattern)))
    local = _local(pattern)
    anchor = Path(local.anchor or ".")
    relative = local.relative_to(anchor) if local.is_absolute() else local
    return sorted(str(p) for p in anchor.glob(str(relative)))


def _listdir(path: Any) -> list[str]:
    fs = _fs(os.fspath(path))
    if fs is not None:
        return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(os.fspath(path), False))
    return sorted(p.name for p in _local(path).iterdir())


def _isdir(path: Any) -> bool:
    fs = _fs(os.fspath(path))
    return bool(fs.isdir(os.fspath(path))) if fs is not None else _local(path).is_dir()


def _makedirs(path: Any) -> None:
    fs = _fs(os.fspath(path))
    if fs is not None:
        fs.makedirs(os.fspath(path), exist_ok=True)
    else:
        _local(path).mkdir(parents=True, exist_ok=True)


def _walk(top: Any, topdown: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:
    fs = _fs(os.fspath(top))
    if fs is not None:
        yield from fs.walk(os.fspath(top), topdown=topdown)
    else:
        yield from os.walk(_local(top), topdown=topdown)


def _stat(path: Any) -> types.SimpleNamespace:
    fs = _fs(os.fspath(path))
    if fs is not None:
        size = int(fs.size(os.fspath(path)))
        return types.SimpleNamespace(length=size, is_directory=fs.isdir(os.fspath(path)))
    local = _local(path)
    st = local.stat()
    return types.SimpleNamespace(
        length=st.st_size, mtime_nsec=st.st_mtime_ns, is_directory=local.is_dir()
    )


def _copy(src: Any, dst: Any, overwrite: bool = False) -> None:
    if not overwrite and _exists(dst):
        raise FileExistsError(f"{dst} exists (tf.io.gfile.copy without overwrite)")
    with _open(src, "rb") as source, _open(dst, "wb") as sink:
        shutil.copyfileobj(source, sink)  # type: ignore[misc]


def _rename(src: Any, dst: Any, overwrite: bool = False) -> None:
    if not overwrite and _exists(dst):
        raise FileExistsError(f"{dst} exists (tf.io.gfile.rename without overwrite)")
    _local(src).replace(_local(dst))


def _remove(path: Any) -> None:
    _local(path).unlink()


def _rmtree(path: Any) -> None:
    shutil.rmtree(_local(path))


def _as_bytes(value: Any, encoding: str = "utf-8") -> bytes:
    return value if isinstance(value, bytes) else str(value).encode(encoding)


def _as_text(value: Any, encoding: str = "utf-8") -> str:
    return value.decode(encoding) if isinstance(value, bytes) else str(value)


_GFILE = _Namespace(
    "tf.io.gfile",
    GFile=_GFile,
    Open=_GFile,
    exists=_exists,
    glob=_glob_paths,
    listdir=_listdir,
    isdir=_isdir,
    makedirs=_makedirs,
    mkdir=_makedirs,
    walk=_walk,
    stat=_stat,
    copy=_copy,
    rename=_rename,
    remove=_remove,
    rmtree=_rmtree,
)
_DTYPES = {
    name: np.dtype(name)
    for name in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128",
    )
}  # fmt: skip
_COMPAT = _Namespace("tf.compat", as_bytes=_as_bytes, as_text=_as_text, as_str=_as_text)

#: What TFDS's lazy ``tensorflow`` resolves to once `install` ran.
STANDIN = _Namespace(
    "tf",
    __version__="0.0.0+catalog-standin",
    io=_Namespace("tf.io", gfile=_GFILE),
    gfile=_GFILE,
    compat=_COMPAT,
    dtypes=_Namespace("tf.dtypes", string=np.dtype(object), as_dtype=np.dtype, **_DTYPES),
    string=np.dtype(object),
    **_DTYPES,
)


def install() -> bool:
    """Make TFDS's lazy ``tensorflow`` the stand-in, unless it was resolved already (to
    the real TensorFlow, which then stays); True when the stand-in is in place."""
    from tensorflow_datasets.core.utils import lazy_imports_utils

    lazy = lazy_imports_utils.tensorflow
    resolved = vars(lazy).get("_module")  # functools.cached_property keeps it here
    if resolved is None:
        vars(lazy)["_module"] = STANDIN
        return True
    return resolved is STANDIN
