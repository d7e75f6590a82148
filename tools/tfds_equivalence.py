"""The examples TFDS 4.9.10 prepares from each registered builder's dummy files, as gold files.

Catalog's builders are tested on small source files in their upstream layout (each builder's
``dummy_data/``). This tool hands the same files to TensorFlow Datasets (its download manager
pointed at them, as TFDS's own ``DatasetBuilderTestCase`` does), lets TFDS prepare them, and
writes what TFDS's data source gives back to ``tests/tfds_gold/<name>[-<config>].json``;
``tests/builders/test_tfds_equivalence.py`` prepares the same files with catalog, in CI, and
compares every example. Run it with TensorFlow + tensorflow-datasets installed (never a
dependency of catalog), from the repository root:

    /work/venvs/tf/bin/python tools/tfds_equivalence.py NAME[/CONFIG] [...]   # or: all

A name alone is its default config (what ``catalog.builder(NAME)`` prepares). A new
builder's gold file is that one command (``tools/tfds_equivalence.py my_dataset``), then
``git add tests/tfds_gold/my_dataset*.json``. TFDS needs each builder's own extra
libraries (scipy for .mat files, pydub for audio, ...): a builder TFDS cannot prepare is
reported and skipped, and no gold file is written for it.

Gold values are canonical (`canonical`): arrays larger than 16 values as their shape and the
sha256 of their values, Text as str, floats as Python floats; the test canonicalizes
catalog's examples the same way. TFDS shuffles the examples it writes, so splits compare as
multisets. Beside the values, each split's value kinds (`kinds`: the Python or NumPy type,
dtype and rank of each feature's values as TFDS's data source gives them) and each
feature's declared TFDS class and dtype (`declared`): the test compares catalog's kinds
with them, so a dtype, a str for bytes or a list for an array is seen.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
GOLD = ROOT / "tests" / "tfds_gold"
_SMALL = 16  # arrays of at most this many values are kept whole


def canonical(value: Any) -> Any:
    """`value` (an example as a data source gives it) as plain JSON values, the same in both
    environments: numbers as Python numbers, small arrays (and lists of numbers) as nested
    lists, larger ones as {shape, sha256 of their values as int64 or float64}; dtypes are not
    part of it (TFDS's data source gives some Sequences as Python lists, catalog as arrays):
    `kinds` records them, and the test compares them by its own rules."""
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, (np.ndarray, np.generic, int, float)) for v in value):
            try:
                value = np.stack([np.asarray(v) for v in value])
            except ValueError:  # arrays of different shapes: element by element
                return [canonical(v) for v in value]
        else:
            return [canonical(v) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "SO":
            return [canonical(v) for v in value.tolist()]
        if value.size <= _SMALL:
            return value.tolist()
        wide = value.astype("<f8" if value.dtype.kind == "f" else "<i8")  # any dtype alike
        digest = hashlib.sha256(np.ascontiguousarray(wide).tobytes()).hexdigest()
        return {"shape": list(value.shape), "sha256": digest}
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return {"bytes_sha256": hashlib.sha256(value).hexdigest(), "size": len(value)}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return value


def kind(value: Any) -> str:
    """What Python/NumPy type `value` is, with its dtype and rank: ``ndarray[uint8, rank 3]``,
    ``np.int64``, ``int``, ``bytes``, ``str``, ``list[str]``, ``dict``; the elements of an
    object array and of a list by the kinds they hold (``ndarray[object of bytes, rank 1]``)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            inner = "|".join(sorted({kind(v) for v in value.ravel().tolist()})) or "nothing"
            return f"ndarray[object of {inner}, rank {value.ndim}]"
        return f"ndarray[{value.dtype.name}, rank {value.ndim}]"
    if isinstance(value, np.generic):
        return f"np.{value.dtype.name}"
    if isinstance(value, (list, tuple)):
        inner = "|".join(sorted({kind(v) for v in value})) or "nothing"
        return f"{type(value).__name__}[{inner}]"
    return type(value).__name__


def kinds(examples: list[Any]) -> dict[str, list[str]]:
    """Feature path -> the kinds (`kind`) its values have over `examples`; nested dicts by
    their paths joined with ``.`` (a name may hold ``/``); an empty list's kind is left out
    when a non-empty one is there (it says nothing about its elements)."""
    found: dict[str, set[str]] = {}

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}" if path else str(key))
        else:
            found.setdefault(path, set()).add(kind(value))

    for example in examples:
        walk(example, "")
    out = {}
    for path, seen in sorted(found.items()):
        known = {k for k in seen if "nothing" not in k}
        out[path] = sorted(known or seen)
    return out


def declared(feature: Any, path: str = "") -> dict[str, str]:
    """Feature path (as `kinds` names them) -> the TFDS feature class and NumPy dtype it
    declares, ``"Scalar int32"``, ``"Sequence of ClassLabel int64"``; TFDS's Text is
    ``object``. Needs TFDS: called with TFDS's top-level `FeaturesDict`."""
    import tensorflow_datasets as tfds

    if isinstance(feature, tfds.features.FeaturesDict):
        out = {}
        for key, child in feature.items():
            out.update(declared(child, f"{path}.{key}" if path else key))
        return out
    if isinstance(feature, tfds.features.Sequence):
        return {k: f"Sequence of {v}" for k, v in declared(feature.feature, path).items()}
    return {path: f"{type(feature).__name__} {np.dtype(feature.np_dtype).name}"}


def multiset(examples: list[Any]) -> list[str]:
    """The canonical examples as sorted JSON texts: a split compared regardless of order."""
    return sorted(json.dumps(e, sort_keys=True) for e in examples)


def gold_path(name: str, config: str | None) -> Path:
    return GOLD / (f"{name}-{config}.json" if config else f"{name}.json")


def local_files(name: str, config: str | None) -> dict[str, Path]:
    """URL -> its dummy file, from the builder's checksums.tsv and dummy_data/."""
    folder = ROOT / "builders" / name
    dummy = folder / "dummy_data"
    if config and (dummy / config).is_dir():
        dummy = dummy / config
    out = {}
    for line in (folder / "checksums.tsv").read_text("utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        url, _, _, filename = line.split("\t")[:4]
        if (dummy / filename).is_file():
            out[url] = dummy / filename
    return out


def default_config(name: str) -> str | None:
    """The config `catalog.builder(name)` prepares (TFDS's default is its first)."""
    data = yaml.safe_load((ROOT / "builders" / name / "builder.yaml").read_text("utf-8"))
    known = list(data.get("configs") or {})
    return data.get("default_config") or (known[0] if known else None)


def _idx_counts(files: dict[str, Path], config: str | None) -> dict[str, int]:
    """{"train": n, "test": n} from the IDX image files' headers (gzipped, or in a zip)."""
    import gzip
    import zipfile

    counts = {}
    for path in files.values():
        members: list[tuple[str, bytes]] = []
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as z:
                for member in z.namelist():
                    if "images-idx3" in member and (config is None or f"-{config}-" in member):
                        members.append((member, gzip.decompress(z.read(member))[:8]))
        elif "images-idx3" in path.name:
            with gzip.open(path) as f:
                members.append((path.name, f.read(8)))
        for member, head in members:
            split = "train" if "train" in member else "test"
            counts[split] = int.from_bytes(head[4:8], "big")
    return counts


def _hooks(name: str, config: str | None, files: dict[str, Path]) -> list[Any]:
    """What TFDS's own tests patch for some builders: MNIST's hard-coded example counts."""
    from unittest import mock

    from tensorflow_datasets.image_classification import mnist

    if name not in ("mnist", "fashion_mnist", "kmnist", "emnist"):
        return []
    counts = _idx_counts(files, config)
    return [
        mock.patch.object(mnist, "_TRAIN_EXAMPLES", counts["train"]),
        mock.patch.object(mnist, "_TEST_EXAMPLES", counts["test"]),
    ]


def _tfds_gold(name: str, config: str | None, work: Path) -> dict[str, Any]:
    """Prepare `name` with TFDS from the dummy files; its examples, canonical, by split."""
    from unittest import mock

    import promise
    import tensorflow  # noqa: F401 - first in the main thread: TFDS's extractor threads would import it and hang
    import tensorflow_datasets as tfds
    from etils import epath

    files = local_files(name, config)
    by_base = {url.rsplit("/", 1)[-1]: path for url, path in files.items()}

    def local(url: Any) -> Path:
        url = getattr(url, "url", url)
        if url in files:
            return files[url]
        base = str(url).rstrip("/").rsplit("/", 1)[-1]
        if base in by_base:
            return by_base[base]
        raise KeyError(f"{name}: no dummy file for TFDS's URL {url}")

    def fetch(self: Any, resource: Any) -> Any:  # every download and download_and_extract
        return promise.Promise.resolve(epath.Path(local(resource)))

    with contextlib.ExitStack() as stack:
        stack.enter_context(
            mock.patch.object(tfds.download.DownloadManager, "_download_or_get_cache", fetch)
        )
        for hook in _hooks(name, config, files):
            stack.enter_context(hook)
        builder = tfds.builder(
            name, config=config, data_dir=str(work / "data"), file_format="array_record"
        )
        if name == "emnist":  # its counts are in the config
            counts = _idx_counts(files, config)
            builder.builder_config.train_examples = counts["train"]
            builder.builder_config.test_examples = counts["test"]
        builder.download_and_prepare(
            download_dir=str(work / "downloads"),
            download_config=tfds.download.DownloadConfig(
                manual_dir=str(work / "manual"), max_examples_per_split=None
            ),
        )
    splits, found = {}, {}
    for split in builder.info.splits:
        source = builder.as_data_source(split=split)
        raw = [source[i] for i in range(len(source))]
        splits[split] = [canonical(e) for e in raw]
        found[split] = kinds(raw)
    return {
        "tfds": tfds.__version__,
        "version": str(builder.info.version),
        "features": sorted(builder.info.features.keys()),
        "supervised_keys": canonical(builder.info.supervised_keys),
        "splits": splits,
        "kinds": found,
        "declared": declared(builder.info.features),
    }


def record_golds(
    labels: list[str],
    gold_of: Callable[[str, Path], dict[str, Any]],
    path_of: Callable[[str], Path],
    check: Callable[[str, dict[str, Any]], str | None] = lambda label, gold: None,
) -> int:
    """Write each label's gold (`gold_of(label, a temporary work dir)`) to `path_of(label)`
    unless `check` names a problem with it; report each, go on after a failure; 1 if any
    failed."""
    failed = []
    for label in labels:
        work = Path(tempfile.mkdtemp(prefix="tfds-gold-"))
        try:
            gold = gold_of(label, work)
        except Exception as error:  # reported; the others go on
            failed.append(f"{label}: {type(error).__name__}: {str(error)[:300]}")
            print(f"FAILED {failed[-1]}", flush=True)
            continue
        finally:
            shutil.rmtree(work, ignore_errors=True)
        problem = check(label, gold)
        if problem is not None:
            failed.append(f"{label}: {problem}")
            print(f"FAILED {failed[-1]}", flush=True)
            continue
        path_of(label).write_text(json.dumps(gold, sort_keys=True, indent=0) + "\n")
        counts = {s: len(v) for s, v in gold["splits"].items()}
        print(f"ok {label}: {counts}", flush=True)
    for line in failed:
        print(f"not written: {line}")
    return 1 if failed else 0


def _config_of(label: str) -> tuple[str, str | None]:
    name, _, given = label.partition("/")
    return name, given or default_config(name)


def main(names: list[str]) -> int:
    if names == ["all"]:
        data = yaml.safe_load((ROOT / "registry.yaml").read_text("utf-8"))
        names = sorted(data["datasets"])
    GOLD.mkdir(parents=True, exist_ok=True)
    return record_golds(
        names,
        lambda label, work: _tfds_gold(*_config_of(label), work),
        lambda label: gold_path(*_config_of(label)),
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
