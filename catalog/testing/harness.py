"""The builder test harness: run a builder's real spec on its dummy files, end to end.

The harness serves the builder's dummy files (``<builder>/dummy_data/<filename>``, or
``<builder>/dummy_data/<config>/<filename>`` for a config when that folder exists) from a
real HTTP server on 127.0.0.1, substitutes their URLs, sizes and checksums for the upstream
ones (an unverified manual file or folder, ``manual:``, is read from the dummy folder as the
manual dir), then runs the real download -> verify -> extract -> prepare -> read path and checks
every example against the features (keys, shapes, dtypes, label ranges). A builder's test
then checks the exact values it expects::

    def test_my_dataset(tmp_path):
        ds = run_builder("builders/my_dataset", tmp_path, num_examples={"train": 3})
        assert ds["train"][0]["label"] == 2

    run_builder("builders/cmaterdb", tmp_path, config="telugu", num_examples=...)
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from catalog.api.builder import DatasetBuilder
from catalog.download.config import DownloadConfig
from catalog.features import (
    Audio,
    ClassLabel,
    Feature,
    FeaturesDict,
    Image,
    Scalar,
    Sequence,
    Tensor,
    Text,
)
from catalog.read.data_source import DataSource
from catalog.spec.load import load_spec
from catalog.spec.model import BuilderSpec
from catalog.testing.http_server import LoopbackServer

__all__ = ["check_example", "dummy_spec", "run_builder", "write_spec_folder"]


def dummy_spec(
    spec: BuilderSpec, server: LoopbackServer, dummy_dir: Path, num_examples: Mapping[str, int]
) -> BuilderSpec:
    """`spec` with every download served by `server` from `dummy_dir` and the dummy counts."""
    downloads = {}
    for d in spec.downloads.values():
        if d.manual:  # no URL: run_builder gives the dummy folder as the manual dir
            downloads[d.name] = d
            continue
        data = (dummy_dir / d.filename).read_bytes()
        parsed = urlparse(d.url)
        # the `wget -x` mirror layout; a builder folder's own file (``path:``) by its name
        where = f"/{parsed.netloc}{parsed.path}" if parsed.netloc else f"/local/{d.filename}"
        where += f"/{d.filename}" if parsed.query else ""  # URLs apart only by ?id= (Drive)
        url = server.add(where, data)
        downloads[d.name] = dataclasses.replace(
            d, url=url, mirrors=(), size=len(data), sha256=hashlib.sha256(data).hexdigest()
        )
    missing = sorted(set(spec.splits) ^ set(num_examples))
    if missing:
        raise ValueError(f"num_examples must give a count for exactly the splits; check {missing}")
    splits = {
        name: dataclasses.replace(s, num_examples=num_examples[name])
        for name, s in spec.splits.items()
    }
    return spec.replace(downloads=downloads, splits=splits)


def write_spec_folder(spec: BuilderSpec, dest: Path) -> Path:
    """A copy of `spec`'s builder folder at `dest` whose builder.yaml and checksums.tsv give
    `spec`'s downloads and split counts (e.g. the dummy spec), so that commands run on the
    copy (``catalog show DEST``) address what the harness prepared: its fingerprint is
    `spec`'s."""
    import shutil

    import yaml

    assert spec.path is not None
    shutil.copytree(spec.path, dest)
    data = yaml.safe_load((dest / "builder.yaml").read_text("utf-8"))
    own = (data.get("configs") or {}).get(spec.config) or {}
    downloads = (own if "downloads" in own else data)["downloads"]
    for name, d in spec.downloads.items():
        downloads[name] = {"url": d.url}
    splits = (own if "splits" in own else data)["splits"]
    for name, s in spec.splits.items():
        splits[name]["num_examples"] = s.num_examples
    (dest / "builder.yaml").write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    lines = [f"{d.url}\t{d.size}\t{d.sha256}\t{d.filename}\n" for d in spec.downloads.values()]
    (dest / "checksums.tsv").write_text("".join(sorted(lines)), "utf-8")
    return dest


def run_builder(
    folder: str | Path,
    tmp_path: Path,
    *,
    num_examples: Mapping[str, int],
    config: str | None = None,
    dummy_dir: str | Path | None = None,
    spec_folder: str | Path | None = None,
) -> dict[str, DataSource]:
    """Prepare the builder in `folder` (its `config`, default: the default one) from its dummy
    files over loopback HTTP; check and return its data sources (one per split).

    With `spec_folder`, also write there a builder folder of the dummy spec
    (`write_spec_folder`), for commands that take a builder folder (``catalog show``)."""
    folder = Path(folder)
    spec = load_spec(folder, config)
    if dummy_dir is None:
        dummy_dir = folder / "dummy_data"
        if spec.config is not None and (dummy_dir / spec.config).is_dir():
            dummy_dir = dummy_dir / spec.config
    with LoopbackServer() as server:
        test_spec = dummy_spec(spec, server, Path(dummy_dir), num_examples)
        if spec_folder is not None:
            write_spec_folder(test_spec, Path(spec_folder))
        builder = DatasetBuilder(test_spec, data_dir=tmp_path / "data")
        manual = _manual_dir(test_spec, Path(dummy_dir), tmp_path / "manual")
        builder.download_and_prepare(
            download_dir=tmp_path / "downloads", download_config=DownloadConfig(manual_dir=manual)
        )
    sources = builder.as_data_source()
    for split, count in num_examples.items():
        ds = sources[split]
        assert len(ds) == count, f"split {split}: {len(ds)} examples, expected {count}"
        for i, example in enumerate(ds):
            check_example(spec.features, example, where=f"{spec.full_name} {split}[{i}]")
    return sources


def _manual_dir(spec: BuilderSpec, dummy_dir: Path, manual: Path) -> Path:
    """A manual dir holding a copy of the dummy files of the spec's unverified manual
    downloads, and nothing else (every other file comes over HTTP)."""
    import shutil

    manual.mkdir(parents=True, exist_ok=True)
    for d in spec.downloads.values():
        if d.manual:
            source = dummy_dir / d.filename
            if source.is_dir():
                shutil.copytree(source, manual / d.filename)
            else:
                shutil.copy2(source, manual / d.filename)
    return manual


def check_example(feature: Feature, value: Any, *, where: str) -> None:
    """Assert that a decoded `value` has the type, shape and dtype `feature` promises."""
    if isinstance(feature, FeaturesDict):
        assert isinstance(value, dict) and set(value) == set(feature), f"{where}: keys {set(value)}"
        for name, child in feature.items():
            check_example(child, value[name], where=f"{where}/{name}")
    elif isinstance(feature, Sequence):
        _check_sequence(feature, value, where=where)
    elif isinstance(feature, ClassLabel):
        low = feature.lowest
        high = feature.num_classes or 0
        assert type(value) is int and low <= value < high, f"{where}: {value!r}"
    elif isinstance(feature, Scalar):
        assert isinstance(value, np.generic) and value.dtype == feature.dtype, f"{where}: {value!r}"
    elif isinstance(feature, Text):
        assert isinstance(value, str), f"{where}: {type(value)}"
    elif isinstance(feature, (Audio, Image, Tensor)):
        _check_array(value, feature.shape, feature.dtype, where=where)
    else:
        raise AssertionError(f"{where}: the harness cannot check {feature!r} yet")


def _check_array(value: Any, shape: Any, dtype: Any, *, where: str) -> None:
    assert isinstance(value, np.ndarray) and value.dtype == dtype, f"{where}: {value!r}"
    assert value.ndim == len(shape) and all(
        want is None or want == got for want, got in zip(shape, value.shape, strict=True)
    ), f"{where}: shape {value.shape}, expected {shape}"
    assert value.flags.writeable, f"{where}: array is read-only"


def _check_sequence(feature: Sequence, value: Any, *, where: str) -> None:
    if feature.columns is not None:  # a sequence of dicts decodes to a dict of sequences
        check_example(feature.columns, value, where=where)
    elif isinstance(value, np.ndarray):  # fixed-shape elements, stacked
        _check_array(value, feature.shape, feature.dtype, where=where)
    else:
        assert isinstance(value, list), f"{where}: {type(value)}"
        assert feature.length is None or len(value) == feature.length, f"{where}: {len(value)}"
        for i, item in enumerate(value):
            check_example(feature.feature, item, where=f"{where}[{i}]")
