"""Write a prepared dataset as Parquet: one file per split, in Hugging Face datasets' layout.

Each split becomes ``<out>/<name>-<split>.parquet``, one row per example in the split's
order, one column per top-level feature, typed the way Hugging Face datasets stores the same
feature, and the features themselves in the schema metadata under ``huggingface`` (the key
`datasets` reads back into `Features`):

==============  ===============================================  ============================
catalog         Parquet column                                   ``datasets`` feature
==============  ===============================================  ============================
Image           struct ``{bytes: binary, path: string}``:        ``Image``
                the stored PNG/JPEG file as it is (a raw image
                is encoded as PNG, losslessly); path null
ClassLabel      int64, the class index                           ``ClassLabel(names=...)``
Scalar          its dtype (bool, int8..uint64, float16..64)      ``Value(dtype)``
Text            string                                           ``Value("string")``
Tensor, BBox    nested lists of the dtype, one level a dimension  ``Sequence`` of ``Value``
Sequence        list of the element's column type (a sequence    ``Sequence``
                of a dict: a struct of lists, as datasets does)
a dict          struct of its features' columns                  a dict of features
==============  ===============================================  ============================

Audio is refused for now (one error naming the feature). pandas reads an image column as
dicts ``{"bytes": ..., "path": None}``, DuckDB and Polars as structs. Rows are written in
row groups of at most `ROWS_PER_GROUP` rows and about `GROUP_BYTES`, so memory stays that of
one group; each file is written beside its target and renamed into place once complete.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from catalog.errors import MissingDependencyError, SpecError
from catalog.features import (
    Audio,
    BBox,
    ClassLabel,
    Feature,
    FeaturesDict,
    Image,
    Scalar,
    Sequence,
    Tensor,
    Text,
)
from catalog.info.dataset_info import DatasetInfo
from catalog.interop.tfds.codec import image_paths
from catalog.read.data_source import DataSource, Decoder, open_sources
from catalog.read.options import ReadOptions
from catalog.storage.data_dir import Location, Store

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["ROWS_PER_GROUP", "export_parquet", "parquet_file_name"]

#: Rows per Parquet row group (and per batch held in memory while writing), at most; a group
#: is cut sooner once its values reach `GROUP_BYTES` (large images).
ROWS_PER_GROUP = 1000
GROUP_BYTES = 64 << 20

Convert = Callable[[Any], Any]


def parquet_file_name(name: str, split: str) -> str:
    """The file a split is written to: ``mnist-train.parquet``."""
    return f"{name}-{split}.parquet"


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet  # the writer lives in this submodule
    except ImportError:
        raise MissingDependencyError(
            "writing Parquet needs pyarrow: pip install 'catalog[parquet]'"
        ) from None
    return pa


def _value_dtype(dtype: np.dtype[Any]) -> str:
    """Hugging Face's ``Value`` dtype name of a NumPy dtype (``float64``, ``bool``, ...)."""
    return "bool" if dtype.kind == "b" else dtype.name


def _column(
    pa: Any, feature: Feature, path: str
) -> tuple[pa.DataType, dict[str, Any] | list[Any], Convert]:
    """The Arrow type of `feature`'s column, its ``datasets`` feature JSON, and the function
    turning a decoded value into the column's Python value."""
    if isinstance(feature, Image):
        struct = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
        png = Image(feature.shape, encoding="png") if feature.encoding == "raw" else None

        def image(value: Any) -> dict[str, Any]:
            data = png.encode(value) if png is not None else bytes(value)
            return {"bytes": data, "path": None}

        return struct, {"_type": "Image"}, image
    if isinstance(feature, ClassLabel):
        return pa.int64(), {"names": list(feature.names), "_type": "ClassLabel"}, int
    if isinstance(feature, Text):
        return pa.string(), {"dtype": "string", "_type": "Value"}, _text(path)
    if isinstance(feature, Scalar):
        kind = _value_dtype(feature.dtype)
        return pa.from_numpy_dtype(feature.dtype), {"dtype": kind, "_type": "Value"}, _item
    if isinstance(feature, (Tensor, BBox)):
        kind = pa.from_numpy_dtype(feature.dtype.newbyteorder("="))
        hf: dict[str, Any] = {"dtype": _value_dtype(feature.dtype), "_type": "Value"}
        for size in reversed(feature.shape):
            kind = pa.list_(kind)
            hf = {"feature": hf, "_type": "Sequence", "length": -1 if size is None else size}
        return kind, hf, _nested_list
    if isinstance(feature, Sequence):
        if feature.columns is not None:  # a dict of sequences, as datasets stores it
            kind, hf_dict, convert = _column(pa, feature.columns, path)
            return kind, {"feature": hf_dict, "_type": "Sequence"}, convert
        inner, hf_inner, convert_one = _column(pa, feature.feature, path)
        length = -1 if feature.length is None else feature.length
        hf_seq = {"feature": hf_inner, "_type": "Sequence", "length": length}
        return pa.list_(inner), hf_seq, lambda value: [convert_one(v) for v in value]
    if isinstance(feature, FeaturesDict):
        parts = {
            name: _column(pa, child, f"{path}/{name}" if path else name)
            for name, child in feature.items()
        }
        struct = pa.struct([(name, kind) for name, (kind, _, _) in parts.items()])
        hf_dict = {name: hf for name, (_, hf, _) in parts.items()}
        converts = {name: convert for name, (_, _, convert) in parts.items()}
        return struct, hf_dict, lambda value: {n: c(value[n]) for n, c in converts.items()}
    kind_name = "Audio" if isinstance(feature, Audio) else type(feature).__name__
    raise SpecError(
        f"not supported yet: feature {path!r} ({kind_name}) cannot be written as Parquet; "
        "export it as TFRecord files instead (--format tfrecord)"
    )


def _text(path: str) -> Convert:
    """A Text's value as a Parquet string; bytes that are not UTF-8 (a `RawText`, kept as
    TFDS's Text keeps them) have no string form: refused, naming the feature."""

    def text(value: Any) -> str:
        if isinstance(value, bytes):
            raise SpecError(
                f"feature {path!r}: a text of {len(value)} bytes that are not UTF-8 (kept as "
                "TFDS keeps them) cannot be a Parquet string; export with --format tfds or "
                "tfrecord, which keep the bytes"
            )
        return str(value)

    return text


def _item(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _nested_list(value: Any) -> Any:
    return np.asarray(value).tolist()


def _nbytes(value: Any) -> int:
    """About how many bytes a converted value holds (its bytes, texts and numbers)."""
    if isinstance(value, (bytes, str)):
        return len(value)
    if isinstance(value, dict):
        return sum(_nbytes(v) for v in value.values())
    if isinstance(value, list):
        return sum(_nbytes(v) for v in value)
    return 8


def _batches(ds: DataSource, convert: Convert) -> Iterator[list[dict[str, Any]]]:
    """The split's rows in groups of at most `ROWS_PER_GROUP` rows and about `GROUP_BYTES`."""
    batch: list[dict[str, Any]] = []
    size = 0
    for example in ds:
        row = convert(example)
        batch.append(row)
        size += _nbytes(row)
        if len(batch) == ROWS_PER_GROUP or size >= GROUP_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def export_parquet(
    info: DatasetInfo,
    folder: str | Location,
    out: str | Path,
    *,
    overwrite: bool = False,
    store: Store | None = None,
) -> dict[str, Path]:
    """Write every split of the dataset in `folder` (whose info is `info`; a local directory
    or a generation in a bucket, read as it is: never through `Path`, which would make
    ``s3://b/...`` ``s3:/b/...``) of the data dir `store` (None: the store holding it) as
    ``<out>/<name>-<split>.parquet``; return split -> file written. An existing file is
    replaced only with `overwrite` (SpecError otherwise, before anything is written)."""
    pa = _pyarrow()
    out = Path(out).expanduser()
    schema_type, hf_features, convert = _column(pa, info.features, "")
    metadata = {"huggingface": json.dumps({"info": {"features": hf_features}})}
    schema = pa.schema(list(schema_type), metadata=metadata)
    targets = {split: out / parquet_file_name(info.name, split) for split in info.splits}
    existing = [str(p) for p in targets.values() if p.exists()]
    if existing and not overwrite:
        raise SpecError(f"{existing[0]} exists already; pass --overwrite to replace it")
    out.mkdir(parents=True, exist_ok=True)
    keep: dict[str, Decoder] = dict.fromkeys(
        image_paths(info.features), False
    )  # stored PNG/JPEG bytes as they are
    sources = open_sources(store, folder, info, None, ReadOptions(decoders=keep))
    assert isinstance(sources, dict)  # every split
    for split, target in targets.items():
        ds = sources[split]
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".incomplete", dir=out)
        os.close(fd)
        try:
            with pa.parquet.ParquetWriter(name, schema) as writer:
                for batch in _batches(ds, convert):
                    writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                if ds.__len__() == 0:
                    writer.write_table(schema.empty_table())
            Path(name).chmod(0o644)
            Path(name).replace(target)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
    return targets
