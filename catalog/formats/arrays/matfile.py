"""Numeric arrays of MATLAB ``.mat`` files (and ``.npy`` files), read a slice at a time.

scipy's ``loadmat`` reads a variable whole (SVHN's extra split: 1.6 GB). Here:

- v5 files are parsed just enough to find each variable's header (class, dimensions, name)
  and where its data lies. An uncompressed variable is read in place; a compressed one
  (``miCOMPRESSED``, as SVHN ships) is inflated once, streamed, into a staged ``.npy`` file
  and read from there.
- v7.3 files are HDF5: read through h5py, which reads only the chunks a slice needs.

Either way `OnDiskArray.read` / `H5Array.read` return the elements ``start..stop-1`` along one
axis, in MATLAB's axis order, reading only those bytes when the axis is the slowest-varying
one (the last, in MATLAB's column-major order) and through a memory map otherwise.
Only real numeric arrays are handled; anything else (cells, structs, chars, sparse, complex)
raises `Unsupported`, and the caller falls back to scipy.
"""

from __future__ import annotations

import math
import os
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from catalog.errors import MissingDependencyError

__all__ = ["H5Array", "OnDiskArray", "Unsupported", "mat_arrays", "npy_array"]

_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
_MI = {1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 9: "f8", 12: "i8", 13: "u8"}
_MX = {6: "f8", 7: "f4", 8: "i1", 9: "u1", 10: "i2", 11: "u2", 12: "i4", 13: "u4", 14: "i8",
       15: "u8"}  # fmt: skip
_MATRIX, _COMPRESSED = 14, 15
_BLOCK = 1 << 20
#: The most bytes a variable's header element (flags, dimensions, name) may have.
_HEADER_BYTES = 1 << 16


class Unsupported(ValueError):
    """A variable this reader does not slice (not a real numeric array): use scipy."""


@dataclass(frozen=True)
class OnDiskArray:
    """An array stored raw in a file at `offset`: stored dtype `dtype`, read as `as_dtype`."""

    path: Path
    offset: int
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    fortran: bool
    as_dtype: np.dtype[Any]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def read(self, axis: int, start: int, stop: int) -> np.ndarray[Any, Any]:
        """Elements ``start..stop-1`` along `axis`, that axis moved first, in memory."""
        axis %= self.ndim
        stop = min(stop, self.shape[axis])
        count = max(0, stop - start)
        shape = list(self.shape)
        shape[axis] = count
        order: Literal["C", "F"] = "F" if self.fortran else "C"
        if axis == (self.ndim - 1 if self.fortran else 0):  # contiguous: read just the bytes
            item = math.prod(self.shape) // max(1, self.shape[axis]) * self.dtype.itemsize
            with open(self.path, "rb") as f:
                f.seek(self.offset + start * item)
                data = f.read(count * item)
            array = np.frombuffer(data, self.dtype).reshape(shape, order=order)
        else:
            mapped = np.memmap(
                str(self.path), self.dtype, "r", offset=self.offset, shape=self.shape, order=order
            )
            part: np.ndarray[Any, Any] = np.array(np.moveaxis(mapped, axis, 0)[start:stop])
            return part.astype(self.as_dtype, copy=False)
        return np.moveaxis(array, axis, 0).astype(self.as_dtype, copy=False)


@dataclass(frozen=True)
class H5Array:
    """A MATLAB v7.3 variable: an HDF5 dataset, whose axes are MATLAB's reversed."""

    path: Path
    name: str
    shape: tuple[int, ...]  # MATLAB's order

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def read(self, axis: int, start: int, stop: int) -> np.ndarray[Any, Any]:
        import h5py

        axis %= self.ndim
        h5_axis = self.ndim - 1 - axis
        index = [slice(None)] * self.ndim
        index[h5_axis] = slice(start, stop)
        with h5py.File(self.path, "r") as f:
            data = np.asarray(f[self.name][tuple(index)])
        return np.moveaxis(data.transpose(), axis, 0)


def npy_array(path: Path) -> OnDiskArray:
    """The array of a ``.npy`` file (without reading its data)."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read = np.lib.format.read_array_header_1_0
        if version != (1, 0):
            read = np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read(f)
        offset = f.tell()
    return OnDiskArray(path, offset, dtype, tuple(shape), fortran, dtype)


class _Inflated:
    """A file object over a zlib stream, inflated as it is read."""

    def __init__(self, f: IO[bytes], size: int) -> None:
        self._f, self._left = f, size
        self._z = zlib.decompressobj()
        self._buffer = b""

    def read(self, n: int) -> bytes:
        while len(self._buffer) < n and (self._left > 0 or self._z.unconsumed_tail):
            chunk = self._z.unconsumed_tail or self._f.read(min(self._left, _BLOCK))
            if not chunk:  # a truncated file: nothing more to inflate, ever
                raise EOFError("the file ends inside a compressed variable")
            if not self._z.unconsumed_tail:
                self._left -= len(chunk)
            self._buffer += self._z.decompress(chunk, max(n, _BLOCK))
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out


Endian = Literal["<", ">"]


def _tag(f: IO[bytes], endian: Endian) -> tuple[int, int, bytes | None]:
    """``(type, nbytes, small data or None)`` of a data element's tag."""
    raw = f.read(8)
    if len(raw) < 8:
        raise EOFError("the file ends inside a data element's tag")
    kind, nbytes = struct.unpack(f"{endian}II", raw)
    if kind >> 16:  # the small data element format: nbytes and type packed in 4 bytes
        return kind & 0xFFFF, kind >> 16, raw[4 : 4 + (kind >> 16)]
    return kind, nbytes, None


def _element(f: IO[bytes], endian: Endian) -> tuple[int, bytes]:
    """A header element (flags, dimensions, name): at most `_HEADER_BYTES`, checked before
    it is read (inflated)."""
    kind, nbytes, small = _tag(f, endian)
    if small is not None:
        return kind, small
    if nbytes > _HEADER_BYTES:
        raise EOFError(f"a header element of {nbytes} bytes (a damaged file?)")
    data = f.read(nbytes)
    if len(data) < nbytes:
        raise EOFError("the file ends inside a header element")
    f.read(-nbytes % 8)  # padding to 8 bytes
    return kind, data


@dataclass(frozen=True)
class _Header:
    name: str
    mx_class: int
    shape: tuple[int, ...]
    complex: bool
    data_type: int
    data_bytes: int


def _matrix_header(f: IO[bytes], endian: Endian) -> _Header:
    """The header of a miMATRIX element's contents, leaving `f` at its real part's data."""
    _, flags = _element(f, endian)
    word = struct.unpack(f"{endian}I", flags[:4])[0]
    _, dims = _element(f, endian)
    shape = struct.unpack(f"{endian}{len(dims) // 4}i", dims)
    _, name = _element(f, endian)
    mx_class = word & 0xFF
    if mx_class not in _MX:
        return _Header(name.decode("latin-1"), mx_class, shape, bool(word & 0x800), 0, 0)
    kind, nbytes, small = _tag(f, endian)
    if small is not None:
        raise Unsupported("a tiny array stored in the small data element format")
    return _Header(name.decode("latin-1"), mx_class, shape, bool(word & 0x800), kind, nbytes)


def _variables(path: Path) -> Iterator[tuple[int, int, bool, str]]:
    """``(element offset, nbytes, compressed, name)`` of every top-level variable of a v5 file."""
    with open(path, "rb") as f:
        header = f.read(128)
        endian: Endian = "<" if header[126:128] == b"IM" else ">"
        position = 128
        size = path.stat().st_size
        while position + 8 <= size:
            f.seek(position)
            kind, nbytes, _ = _tag(f, endian)
            if kind == _COMPRESSED:
                stream = _Inflated(f, nbytes)
                _tag(stream, endian)  # type: ignore[arg-type]  # the miMATRIX inside
                name = _matrix_header(stream, endian).name  # type: ignore[arg-type]
                yield position, nbytes, True, name
                position += 8 + nbytes
            else:
                if kind == _MATRIX:
                    yield position, nbytes, False, _matrix_header(f, endian).name
                position += 8 + nbytes + (-nbytes % 8)


def _check(header: _Header, path: Path) -> np.dtype[Any]:
    if header.mx_class not in _MX or header.complex or header.data_type not in _MI:
        raise Unsupported(f"{path}: {header.name!r} is not a real numeric array")
    dtype = np.dtype(_MI[header.data_type])
    if any(d < 0 for d in header.shape) or header.data_bytes != (
        math.prod(header.shape) * dtype.itemsize
    ):  # a damaged header: its data is not what its dimensions say (scipy then names it)
        raise Unsupported(f"{path}: {header.name!r} holds other bytes than its dimensions say")
    return dtype


def _v5_array(path: Path, name: str, scratch: Path | None) -> OnDiskArray:
    for position, nbytes, compressed, found in _variables(path):
        if found != name:
            continue
        with open(path, "rb") as f:
            endian: Endian = "<" if f.read(128)[126:128] == b"IM" else ">"
            f.seek(position + 8)
            if not compressed:
                header = _matrix_header(f, endian)
                dtype = _check(header, path).newbyteorder(endian)
                if f.tell() + header.data_bytes > path.stat().st_size:
                    raise EOFError(f"the file ends inside variable {header.name!r}")
                as_dtype = np.dtype(_MX[header.mx_class])
                return OnDiskArray(path, f.tell(), dtype, header.shape, True, as_dtype)
            if scratch is None:
                raise Unsupported("a compressed variable, and no folder to stage it in")
            stream = _Inflated(f, nbytes)
            _tag(stream, endian)  # type: ignore[arg-type]  # the miMATRIX inside
            header = _matrix_header(stream, endian)  # type: ignore[arg-type]
            dtype = _check(header, path).newbyteorder(endian)
            staged = scratch / "mat" / f"{path.name}.{name}.npy"
            if not staged.is_file():
                _stage(stream, header, dtype, staged)
            array = npy_array(staged)
            return OnDiskArray(
                staged, array.offset, dtype, header.shape, True, np.dtype(_MX[header.mx_class])
            )
    raise KeyError(name)


def _stage(stream: _Inflated, header: _Header, dtype: np.dtype[Any], staged: Path) -> None:
    """Write the variable's data, streamed, as a Fortran-ordered .npy file."""
    staged.parent.mkdir(parents=True, exist_ok=True)
    partial = staged.with_name(f"{staged.name}.partial-{os.getpid()}")
    with open(partial, "wb") as out:
        meta = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": True}
        np.lib.format.write_array_header_2_0(out, {**meta, "shape": header.shape})
        left = header.data_bytes
        while left:
            chunk = stream.read(min(left, _BLOCK))
            if not chunk:
                raise EOFError(f"the compressed variable {header.name!r} ends early")
            out.write(chunk)
            left -= len(chunk)
    partial.replace(staged)


def mat_arrays(
    path: Path, names: list[str], scratch: Path | None
) -> dict[str, OnDiskArray | H5Array]:
    """The variables `names` of a .mat file, to be read a slice at a time (see the module
    docstring). KeyError names a missing variable; Unsupported one this cannot slice."""
    with open(path, "rb") as f:
        head = f.read(128)
        f.seek(512)
        hdf5 = f.read(8) == _HDF5_MAGIC
    if hdf5 or head.startswith(_HDF5_MAGIC):
        try:
            import h5py
        except ImportError:
            raise MissingDependencyError(
                f"{path} is a MATLAB v7.3 (HDF5) file: reading it needs h5py, an optional "
                "extra: pip install 'catalog[mat]'"
            ) from None
        out: dict[str, OnDiskArray | H5Array] = {}
        with h5py.File(path, "r") as h5:
            for name in names:
                dataset = h5[name]  # KeyError when missing
                if not isinstance(dataset, h5py.Dataset) or dataset.dtype.kind not in "iuf":
                    raise Unsupported(f"{path}: {name!r} is not a numeric array")
                out[name] = H5Array(path, name, tuple(reversed(dataset.shape)))
        return out
    return {name: _v5_array(path, name, scratch) for name in names}
