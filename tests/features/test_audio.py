"""The Audio feature and the WAV reader/writer behind it."""

from __future__ import annotations

import struct
import wave
from pathlib import Path

import numpy as np
import pytest

from catalog.errors import FeatureError
from catalog.features import Audio, ClassLabel, FeaturesDict, Sequence, from_json
from catalog.features.wav import read_header, read_samples, write_wav

RAMP = np.array([-32768, -1, 0, 1, 32767, 1000], np.int16)


def stdlib_wav(samples: np.ndarray, rate: int, width: int, channels: int = 1) -> bytes:
    """A WAV file written by the standard library's `wave` (an independent writer)."""
    import io

    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())
    return out.getvalue()


def decode(feature: Audio, data: bytes) -> np.ndarray:
    return feature.decode(bytearray(data), 0, len(data))


def test_a_wav_file_is_kept_byte_for_byte_and_decodes_to_its_samples() -> None:
    data = stdlib_wav(RAMP, 16000, 2)
    audio = Audio(16000, "int16")
    assert audio.encode(data) == data
    got = decode(audio, data)
    assert got.dtype == np.int16 and got.tolist() == RAMP.tolist() and got.flags.writeable
    assert decode(Audio(16000, "int64"), data).dtype == np.int64


def test_float_dtypes_scale_integer_samples_to_minus_one_one() -> None:
    got = decode(Audio(16000, "float32"), stdlib_wav(RAMP, 16000, 2))
    assert got.dtype == np.float32
    assert got.tolist() == pytest.approx(
        [-1.0, -1 / 32768, 0.0, 1 / 32768, 32767 / 32768, 1000 / 32768]
    )
    floats = np.array([0.5, -0.25], np.float32)
    stored = Audio(8000, "float32").encode(floats)
    assert read_header(stored).is_float and decode(Audio(8000, "float32"), stored).tolist() == [
        0.5,
        -0.25,
    ]


def test_8_and_24_bit_pcm_and_stereo() -> None:
    eight = stdlib_wav(np.array([0, 128, 255], np.uint8), 8000, 1)
    assert decode(Audio(8000, "int16"), eight).tolist() == [-128, 0, 127]
    triples = b"".join(
        v.to_bytes(3, "little", signed=True) for v in (-(1 << 23), -1, 5, (1 << 23) - 1)
    )
    deep = stdlib_wav(np.frombuffer(triples, np.uint8), 8000, 3)
    assert decode(Audio(8000, "int32"), deep).tolist() == [-(1 << 23), -1, 5, (1 << 23) - 1]
    stereo = np.array([[1, -1], [2, -2], [3, -3]], np.int16)
    feature = Audio(44100, "int16", shape=(None, 2))
    assert decode(feature, feature.encode(stereo)).tolist() == stereo.tolist()
    assert decode(feature, stdlib_wav(stereo, 44100, 2, channels=2)).shape == (3, 2)


def test_extensible_headers_and_extra_chunks_are_read() -> None:
    data = RAMP.tobytes()
    fmt = struct.pack("<HHIIHHHHIH14s", 0xFFFE, 1, 16000, 32000, 2, 16, 22, 16, 4, 1, b"\x00" * 14)
    body = b"WAVE" + b"LIST" + struct.pack("<I", 3) + b"abc\x00"  # an odd chunk, padded
    body += (
        b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    )
    file = b"RIFF" + struct.pack("<I", len(body)) + body
    assert decode(Audio(16000), file).tolist() == RAMP.tolist()


@pytest.mark.parametrize(
    ("feature", "value", "message"),
    [
        (Audio(8000), stdlib_wav(RAMP, 16000, 2), "expected 8000 Hz, got a WAV file of 16000 Hz"),
        (Audio(16000), stdlib_wav(np.zeros(4, np.int16), 16000, 2, channels=2),
         "expected 1 channel(s), got a WAV file of 2"),
        (Audio(16000, "int16"), stdlib_wav(np.zeros(2, np.int32), 16000, 4),
         "int16 cannot hold 32-bit samples; use a wider dtype (int32) or a float one"),
        (Audio(16000, "int16"), write_wav(np.zeros(2, np.float32), 16000),
         "int16 cannot hold float samples; use a float dtype"),
        (Audio(16000), b"<html>", "not a WAV file (no RIFF/WAVE header)"),
        (Audio(16000), stdlib_wav(RAMP, 16000, 2)[:-4],
         "truncated: the 'data' chunk says 12 bytes, 8 are there"),
        (Audio(16000), np.array([40000]), "values 40000..40000 do not fit int16"),
        (Audio(16000), np.zeros((3, 2), np.int16), "expected shape (None,), got (3, 2)"),
        (Audio(16000, "float32"), np.zeros(3, np.int16),
         "expected float samples in [-1, 1], got dtype int16"),
        (Audio(16000), "/nonexistent/a.wav", "cannot read WAV file '/nonexistent/a.wav'"),
    ],
)  # fmt: skip
def test_values_that_do_not_fit_are_refused(feature: Audio, value: object, message: str) -> None:
    with pytest.raises(FeatureError) as error:
        feature.encode(value)
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"sample_rate": 0}, "sample_rate must be a positive int"),
     ({"sample_rate": 8000, "dtype": "uint8"}, "dtype must be one of int16, int32, int64"),
     ({"sample_rate": 8000, "shape": (None, None)},
      "shape must be (None,) for mono or (None, channels)"),
     ({"sample_rate": 8000, "shape": (100,)}, "shape must be (None,)")],
)  # fmt: skip
def test_bad_audio_specs(kwargs: dict, message: str) -> None:
    with pytest.raises(FeatureError) as error:
        Audio(**kwargs)
    assert message in str(error.value)


def test_json_round_trip_and_in_a_features_dict() -> None:
    feature = Audio(16000, "float64", shape=(None, 2))
    assert from_json(feature.to_json()) == feature
    assert feature.to_json() == {
        "type": "Audio",
        "sample_rate": 16000,
        "dtype": "float64",
        "shape": [None, 2],
    }
    features = FeaturesDict({"audio": Audio(8000), "label": ClassLabel(num_classes=3)})
    record = features.encode({"audio": RAMP, "label": 2})
    example = features.decode_example(bytearray(record))
    assert example["label"] == 2 and example["audio"].tolist() == RAMP.tolist()
    undecoded = features.decoder(skip={"audio"})(bytearray(record), 0, len(record))
    assert (
        read_samples(undecoded["audio"], read_header(undecoded["audio"]))[:, 0].tolist()
        == RAMP.tolist()
    )
    clips = Sequence(Audio(8000)).decode(
        *(lambda b: (bytearray(b), 0, len(b)))(Sequence(Audio(8000)).encode([RAMP, RAMP[:2]]))
    )
    assert [c.tolist() for c in clips] == [RAMP.tolist(), RAMP[:2].tolist()]


def test_unlabelled_class_labels() -> None:
    label = ClassLabel(names=["neg", "pos"], allow_unlabeled=True)
    assert [label.decode(bytearray(label.encode(v)), 0, 1) for v in (-1, 0, "pos", "-1")] == [
        -1,
        0,
        1,
        -1,
    ]
    block = np.frombuffer(b"".join(label.encode(v) for v in (-1, 1, 0)), np.uint8).reshape(3, 1)
    assert label.decode_block(block) == [-1, 1, 0]
    assert label.int2str(-1) == "-1" and from_json(label.to_json()) == label
    with pytest.raises(FeatureError, match=r"label -2 is out of range: expected -1\.\.1"):
        label.encode(-2)
    assert Sequence(label).decode(
        *(lambda b: (bytearray(b), 0, len(b)))(Sequence(label).encode([-1, 1]))
    ).tolist() == [-1, 1]


def test_write_wav_is_read_by_the_standard_library(tmp_path: Path) -> None:
    path = tmp_path / "a.wav"
    path.write_bytes(write_wav(RAMP, 22050))
    with wave.open(str(path)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (22050, 1, 2)
        assert np.frombuffer(w.readframes(10), np.int16).tolist() == RAMP.tolist()


def test_text_of_any_length_up_to_the_length_field(monkeypatch: pytest.MonkeyPatch) -> None:
    from catalog.features import Text
    from catalog.features import text as text_module

    long = "é" * 3_000_000  # 6 MB of UTF-8, one value
    features = FeaturesDict({"text": Text()})
    assert features.decode_example(bytearray(features.encode({"text": long})))["text"] == long
    monkeypatch.setattr(text_module, "MAX_BYTES", 5)
    with pytest.raises(FeatureError, match="6 bytes of UTF-8; a Text holds at most 5"):
        Text().encode("ééé")
