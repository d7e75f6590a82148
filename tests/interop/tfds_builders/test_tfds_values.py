"""`catalog.formats.tfds.values`: a TFDS generator's raw values as catalog's features take
them, where TFDS's own features would keep what catalog's refuse (no tensorflow-datasets
needed: the conversion is catalog's own)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from catalog.errors import FeatureError
from catalog.features import ClassLabel, FeaturesDict, Scalar, Sequence, Tensor, Text
from catalog.features.text import RawText
from catalog.formats.tfds.values import to_values

from conftest import load_module

ROOT = Path(__file__).resolve().parents[3]


def _roundtrip(example: dict[str, Any], features: FeaturesDict) -> dict[str, Any]:
    values = to_values(example, features)
    return features.decode_example(bytearray(features.encode_example(values)))


def test_text_bytes_that_are_not_utf8_are_kept_as_tfds_keeps_them() -> None:
    """rock_you: TFDS's Text stores any bytes and its data source gives them back."""
    features = FeaturesDict({"password": Text(), "tags": Sequence(Text())})
    got = _roundtrip({"password": b"\xe9t\xe9", "tags": [b"ok", b"\xff"]}, features)
    assert got == {"password": b"\xe9t\xe9", "tags": ["ok", b"\xff"]}
    assert isinstance(to_values(b"\xe9", Text()), RawText)
    assert to_values(b"caf\xc3\xa9", Text()) == "caf\u00e9"


def test_a_class_name_that_is_not_utf8_is_still_refused() -> None:
    with pytest.raises(FeatureError, match="not UTF-8 text"):
        to_values(b"\xe9", ClassLabel(names=["a"]))


def test_none_for_a_float_is_nan_as_tfds_encodes_it() -> None:
    """real_toxicity_prompts: TFDS encodes with np.asarray(value, dtype): None -> NaN for
    floats (inside a list too); ints refuse None, as NumPy (and so TFDS) refuses it."""
    features = FeaturesDict({"score": Scalar("float32"), "scores": Tensor((None,), "float64")})
    got = _roundtrip({"score": None, "scores": [1.5, None]}, features)
    assert math.isnan(got["score"])
    assert got["scores"][0] == 1.5 and math.isnan(got["scores"][1])
    with pytest.raises(FeatureError, match="got None"):
        _roundtrip({"n": None}, FeaturesDict({"n": Scalar("int32")}))
    assert to_values(None, Scalar("int64")) is None
    assert np.asarray(to_values(None, Scalar("float16"))).dtype == np.float16


def test_variable_language_translations_are_sorted_pairs_as_tfds_stores_them() -> None:
    """TranslationVariableLanguages: {language: a text or several} -> every pair, sorted by
    language then text, as two lists (TFDS's encode_example); only at the paths named."""
    features = FeaturesDict(
        {"t": FeaturesDict({"language": Sequence(Text()), "translation": Sequence(Text())})}
    )
    value = {"t": {"fr": ["le chat", "la chatte"], "en": b"the cat", "de": "die Katze"}}
    got = _roundtrip_translations(value, features)
    assert got == {
        "t": {
            "language": ["de", "en", "fr", "fr"],
            "translation": ["die Katze", "the cat", "la chatte", "le chat"],
        }
    }
    with pytest.raises(FeatureError, match="language"):  # not named: the dict stays a dict
        features.encode_example(to_values(value, features))


def _roundtrip_translations(example: dict[str, Any], features: FeaturesDict) -> dict[str, Any]:
    values = to_values(example, features, translations=frozenset({"t"}))
    return features.decode_example(bytearray(features.encode_example(values)))


def test_a_tfds_directory_with_translation_features_reads_as_tfds_gives_it() -> None:
    """xnli written by TFDS + TensorFlow (tests/tfds_gold/repo/tfds_dirs/README.md): its
    Translation (premise) and TranslationVariableLanguages (hypothesis) read through
    catalog's TFDS directory reader equal what TFDS's own data source gave (xnli.json)."""
    import catalog

    tool = load_module(ROOT / "tools" / "tfds_equivalence.py")
    repo = ROOT / "tests" / "tfds_gold" / "repo"
    gold = json.loads((repo / "xnli.json").read_text("utf-8"))
    sources = catalog.open_tfds(repo / "tfds_dirs" / "xnli" / "1.1.0")
    assert set(sources) == set(gold["splits"])
    for split, examples in gold["splits"].items():
        got = [tool.canonical(sources[split][i]) for i in range(len(sources[split]))]
        assert tool.multiset(got) == tool.multiset(examples), split
    hypothesis = sources["validation"][0]["hypothesis"]
    assert list(hypothesis["language"])[:2] == ["ar", "bg"]  # sorted, as TFDS stores them
