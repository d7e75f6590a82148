"""FeaturesDict's structure: paths through many features in linear time, and examples whose
keys come back in the features' order (a table's columns in the file's order)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from catalog import Feature, FeaturesDict, Scalar, Text
from catalog.features.features_dict import feature_at, split_path


class _Counting(Mapping[str, Feature]):
    """Features that count how many names a lookup touches."""

    def __init__(self, names: list[str]) -> None:
        self._features: dict[str, Feature] = dict.fromkeys(names, Scalar("int64"))
        self.touched = 0

    def __getitem__(self, name: str) -> Feature:
        self.touched += 1
        return self._features[name]

    def __contains__(self, name: object) -> bool:
        self.touched += 1
        return name in self._features

    def __iter__(self) -> Iterator[str]:
        for name in self._features:
            self.touched += 1
            yield name

    def __len__(self) -> int:
        return len(self._features)


def _touched_per_lookup(n: int) -> float:
    features = _Counting([f"c{i}" for i in range(n)] + [f"g{i}/x" for i in range(n)])
    for i in range(n):
        assert feature_at(features, f"c{i}") is not None
        assert feature_at(features, f"g{i}/x") is not None
        assert feature_at(features, f"c{i}/y") is None
    return features.touched / (3 * n)


def test_path_lookups_take_time_linear_in_the_features() -> None:
    # 12,000 columns took 114 s to prepare, most in split_path scanning every name per path:
    # a lookup touches a few names, however many features there are
    small, large = _touched_per_lookup(300), _touched_per_lookup(3_000)
    assert large <= small <= 4, (small, large)


def test_split_path_prefers_the_longest_name() -> None:
    features = {"image": Text(), "image/filename": Text(), "a/": Text(), "": Text()}
    assert split_path(features, "image/filename") == ("image/filename", "")
    assert split_path(features, "image/filename/x") == ("image/filename", "x")
    assert split_path(features, "image/x") == ("image", "x")
    assert split_path(features, "a//b") == ("a/", "b")
    assert split_path(features, "/b") == ("", "b")
    assert split_path(features, "nothing") is None


def test_decoded_keys_follow_the_features_order() -> None:
    # a record stores fixed-size features first; the example keeps the features' order
    features = FeaturesDict(
        {"txt": Text(), "n": Scalar("int64"), "t2": Text(), "f": Scalar("float64")}
    )
    example = {"txt": "x", "n": 1, "t2": "y", "f": 1.5}
    decoded = features.decode_example(bytearray(features.encode_example(example)))
    assert list(decoded) == ["txt", "n", "t2", "f"]
    assert decoded == example
    skipping = features.decoder(skip={"t2"})
    record = bytearray(features.encode_example(example))
    assert list(skipping(record, 0, len(record))) == ["txt", "n", "t2", "f"]
