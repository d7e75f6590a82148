"""Records of varying size decode a batch column by column (`FeaturesDict.decode_records`,
reached through `RecordCodec.decode_many`): the same examples, of the same types and dtypes,
as decoding each record alone; malformed records are reported as they are one by one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.errors import SourceFormatError
from catalog.features import ClassLabel, FeaturesDict, Image, Scalar, Sequence, Tensor, Text
from catalog.features.codec import RecordCodec
from catalog.features.text import RawText

_SCALARS = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
            "float16", "float32", "float64"]  # fmt: skip


def _feature(draw: Any, kind: str) -> Any:
    if kind == "scalar":
        return Scalar(draw(st.sampled_from(_SCALARS)))
    if kind == "label":
        classes = draw(st.sampled_from([3, 200, 70_000]))  # one, one, three bytes wide
        return ClassLabel(num_classes=classes, allow_unlabeled=draw(st.booleans()))
    if kind == "tensor":
        shape = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
        return Tensor(shape=shape, dtype=draw(st.sampled_from(["uint8", "int32", "float64"])))
    if kind == "image":
        return Image(shape=(2, 3, 1), encoding="raw")
    if kind == "numbers":  # a list column: token ids, scores
        return Sequence(Scalar(draw(st.sampled_from(_SCALARS))))
    if kind == "texts":  # tokens
        return Sequence(Text())
    if kind == "objects":  # COCO's objects: a dict of sequences
        return Sequence({"label": Scalar("int64"), "name": Text()})
    return Text()


def _value(rng: np.random.Generator, feature: Any) -> Any:
    if isinstance(feature, Sequence):
        count = int(rng.integers(0, 6))
        if isinstance(feature.feature, FeaturesDict):
            return [{k: _value(rng, f) for k, f in feature.feature.items()} for _ in range(count)]
        return [_value(rng, feature.feature) for _ in range(count)]
    if isinstance(feature, Scalar):
        dtype = feature.dtype
        if dtype.kind == "b":
            return bool(rng.integers(2))
        raw = rng.integers(0, 256, dtype.itemsize, np.uint8).tobytes()
        value = np.frombuffer(raw, dtype)[0]  # any bit pattern: NaNs, infinities, extremes
        if dtype.kind == "f" and not np.isfinite(value):
            value = dtype.type(rng.standard_normal())
        return value
    if isinstance(feature, ClassLabel):
        low = -1 if feature.allow_unlabeled else 0
        return int(rng.integers(low, feature.num_classes))
    if isinstance(feature, Image):
        return np.frombuffer(rng.bytes(6), np.uint8).reshape(2, 3, 1).copy()
    if isinstance(feature, Tensor):
        shape = [int(side or 0) for side in feature.shape]  # fixed: no None
        return rng.integers(0, 100, shape).astype(feature.dtype)
    texts = ["", "a", "row 17 abcabc", "café ünïcode ✓", "x" * 300]
    if rng.integers(6) == 0:
        return RawText(b"caf\xe9 \xff")  # stored bytes that are not UTF-8: decode to bytes
    return texts[int(rng.integers(len(texts)))]


def _same(batched: Any, alone: Any) -> None:
    assert type(batched) is type(alone)
    if isinstance(alone, dict):
        assert list(batched) == list(alone)
        for key in alone:
            _same(batched[key], alone[key])
    elif isinstance(alone, list):
        assert len(batched) == len(alone)
        for b, a in zip(batched, alone, strict=True):
            _same(b, a)
    elif isinstance(alone, (np.ndarray, np.generic)):
        assert batched.dtype == alone.dtype
        assert np.shape(batched) == np.shape(alone)
        assert np.asarray(batched).tobytes() == np.asarray(alone).tobytes()
        if isinstance(alone, np.ndarray):
            assert batched.flags.writeable == alone.flags.writeable
    else:
        assert batched == alone


@st.composite
def _tables(draw: Any) -> tuple[FeaturesDict, list[bytes]]:
    kinds = draw(
        st.lists(
            st.sampled_from(
                ["scalar", "label", "tensor", "image", "text", "numbers", "texts", "objects"]
            ),
            max_size=6,
        )
    )
    kinds.append("text")  # at least one feature of varying size: the records vary
    draw(st.randoms()).shuffle(kinds)
    features = FeaturesDict({f"f{i}": _feature(draw, kind) for i, kind in enumerate(kinds)})
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    codec = RecordCodec(features)
    rows = draw(st.integers(2, 40))
    records = [
        codec.encode({name: _value(rng, f) for name, f in features.items()}) for _ in range(rows)
    ]
    return features, records


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(_tables())
def test_a_batch_decodes_as_each_record_alone(table: tuple[FeaturesDict, list[bytes]]) -> None:
    features, records = table
    codec = RecordCodec(features)
    alone = [codec.decode(record) for record in records]
    buf = bytearray().join(records)
    lengths = np.array([len(r) for r in records], np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    # the batch path itself is taken (it does not fall back to one record at a time)
    assert features.decode_records(buf, starts + 1, lengths - 1) is not None
    batched = codec.decode_many(records)
    assert len(batched) == len(alone)
    for b, a in zip(batched, alone, strict=True):
        assert list(b) == list(a)  # the same keys in the same order
        for name in a:
            _same(b[name], a[name])


def _table_codec() -> RecordCodec:
    return RecordCodec(
        FeaturesDict(
            {"name": Text(), "id": Scalar("int64"), "x": Scalar("float64"), "flag": Scalar(bool)}
        )
    )


def _rows(codec: RecordCodec, n: int) -> list[bytes]:
    return [
        codec.encode({"name": f"row {i}", "id": i, "x": i / 7, "flag": i % 3 == 0})
        for i in range(n)
    ]


def test_a_table_batch_makes_no_call_per_record(monkeypatch: pytest.MonkeyPatch) -> None:
    codec = _table_codec()
    records = _rows(codec, 128)
    expected = [codec.decode(r) for r in records]

    def refuse(*args: Any) -> None:
        raise AssertionError("decoded one record at a time")

    monkeypatch.setattr(codec, "decode", refuse)
    monkeypatch.setattr(FeaturesDict, "decode", refuse)
    assert codec.decode_many(records) == expected
    assert list(codec.decode_many(records)[5]) == ["name", "id", "x", "flag"]


@pytest.mark.parametrize(
    "damage",
    [lambda r: r[:-1], lambda r: r + b"\x00", lambda r: r[:3], lambda r: b"",
     lambda r: r[:18] + b"\xff\xff\xff\x7f" + r[22:]],
    ids=["short", "long", "truncated", "empty", "huge-length"],
)  # fmt: skip
def test_a_malformed_record_in_a_batch_is_the_error_it_is_alone(damage: Any) -> None:
    codec = _table_codec()
    records = _rows(codec, 10)
    records[4] = damage(records[4])
    with pytest.raises(SourceFormatError) as alone:
        codec.decode(records[4])
    with pytest.raises(SourceFormatError) as batched:
        codec.decode_many(records)
    assert str(batched.value) == str(alone.value)


def test_a_batch_of_another_record_version_is_refused() -> None:
    codec = _table_codec()
    records = _rows(codec, 4)
    records[2] = b"\x07" + records[2][1:]
    with pytest.raises(SourceFormatError, match="record format version 7 is not 1"):
        codec.decode_many(records)


def test_custom_decoders_keep_decoding_one_record_at_a_time() -> None:
    features = FeaturesDict({"name": Text(), "id": Scalar("int64")})
    codec = RecordCodec(features, decoders={"name": lambda data: data.upper()})
    records = [codec.encode({"name": f"r{i}", "id": i}) for i in range(3)]
    assert [e["name"] for e in codec.decode_many(records)] == [b"R0", b"R1", b"R2"]


def test_zero_dimensional_tensors_decode_to_arrays_in_a_batch_too() -> None:
    # fixed-size records (the whole batch in one block) and records of varying size alike
    for extra in ({}, {"name": Text()}):
        features = FeaturesDict({"t": Tensor(shape=(), dtype="int32"), "s": Scalar(), **extra})
        codec = RecordCodec(features)
        examples = [{"t": np.int32(i), "s": i, "name": "n"} for i in range(3)]
        records = [codec.encode({k: e[k] for k in features}) for e in examples]
        alone_each = [codec.decode(record) for record in records]
        for batched, alone in zip(codec.decode_many(records), alone_each, strict=True):
            _same(batched["t"], alone["t"])
            _same(batched["s"], alone["s"])
