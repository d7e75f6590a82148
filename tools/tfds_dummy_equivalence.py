"""TFDS's own examples (TFDS 4.9.10 + TensorFlow) of TFDS datasets catalog has no builder of.

`tools/tfds_equivalence.py` records TFDS's examples from catalog's builders' dummy files.
This sibling covers TFDS datasets catalog only reaches as ``tfds:NAME``: each one's small
source files are in ``tests/data/tfds_dummy/<name>/files/``, beside a ``DUMMY.json`` saying what
TFDS's ``DatasetBuilderTestCase`` would be told in the builder's ``<name>_test.py``:

    {"config": "...",                       # the config tested (null: the default)
     "extract_result": ...,                 # DL_EXTRACT_RESULT (names in files/)
     "download_result": ...,                # DL_DOWNLOAD_RESULT (null: as extract_result)
     "extract_only_result": ...,            # DL_EXTRACT_ONLY_RESULT (null: real extract)
     "splits": {"train": 3, ...},           # how many examples each split has
     "category": "text" | "structured" | "image" | "audio" | "video",
     "source": "..."}                       # where the files come from

TFDS's download manager is patched as ``DatasetBuilderTestCase`` patches it (download,
download_and_extract, extract, manual_dir, download_dir answer from the folder), TFDS
prepares the dataset, and what its data source gives back is written, canonical as
`tools/tfds_equivalence.py` makes it, to ``tests/tfds_gold/repo/<name>[-<config>].json``.
``tests/interop/tfds_builders/test_tfds_dummy_gold.py`` prepares ``tfds:NAME[/CONFIG]`` with
catalog (no TensorFlow) from the same files through `catalog.formats.tfds.downloads`'
`dummy_downloads` hook and compares every example. Run it with TensorFlow and
tensorflow-datasets installed (never a dependency of catalog), from the repository root:

    /work/venvs/tf/bin/python tools/tfds_dummy_equivalence.py NAME [...]   # or: all
    python tools/tfds_dummy_equivalence.py --table   # STATUS.json as the docs' table

The oracle's venv (TensorFlow is never a dependency of catalog; the builders' own libraries
beside it): ``python3 -m venv /work/venvs/tf && /work/venvs/tf/bin/pip install
tensorflow==2.21.0 tensorflow-datasets==4.9.10 pyyaml pandas scipy h5py pillow``.

Every dataset tried, with its outcome (``equal`` once the test agrees, ``not run`` with
why), is listed in ``tests/tfds_gold/repo/STATUS.json`` (kept by hand beside this tool:
the test checks it).
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tfds_equivalence as base

ROOT = base.ROOT
DUMMY = ROOT / "tests" / "data" / "tfds_dummy"
GOLD = ROOT / "tests" / "tfds_gold" / "repo"


def dummy_spec(name: str) -> dict[str, Any]:
    """The folder's DUMMY.json (see the module docstring)."""
    return json.loads((DUMMY / name / "DUMMY.json").read_text("utf-8"))  # type: ignore[no-any-return]


def gold_path(name: str, config: str | None) -> Path:
    return GOLD / (f"{name}-{config}.json" if config else f"{name}.json")


def _local(folder: Path, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, dict):
        return {k: _local(folder, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_local(folder, v) for v in value]
    from etils import epath

    return epath.Path(folder) / value


def _tfds_gold(name: str, spec: dict[str, Any], work: Path) -> dict[str, Any]:
    """Prepare `name` with TFDS from its dummy folder, as DatasetBuilderTestCase does."""
    from unittest import mock

    import tensorflow  # noqa: F401 - first in the main thread (see tfds_equivalence)
    import tensorflow_datasets as tfds
    from etils import epath

    folder = DUMMY / name / "files"
    extracted = _local(folder, spec.get("extract_result")) or epath.Path(folder)
    downloaded = _local(folder, spec.get("download_result")) or extracted
    patches: dict[str, Any] = {
        "download_and_extract": lambda self, url: extracted,
        "download": lambda self, url: downloaded,
        "download_checksums": lambda self, url: None,  # as DatasetBuilderTestCase
        "manual_dir": epath.Path(folder),
        "download_dir": epath.Path(folder),
    }
    if spec.get("extract_only_result") is not None:
        only = _local(folder, spec["extract_only_result"])
        patches["extract"] = lambda self, path: only
    with contextlib.ExitStack() as stack:
        stack.enter_context(
            mock.patch.multiple("tensorflow_datasets.core.download.DownloadManager", **patches)
        )
        builder = tfds.builder(
            name, config=spec.get("config"), data_dir=str(work / "data"),
            file_format="array_record",
        )  # fmt: skip
        builder.download_and_prepare(
            download_dir=str(work / "downloads"),
            download_config=tfds.download.DownloadConfig(
                compute_stats=tfds.download.ComputeStatsMode.SKIP
            ),
        )
    splits, found = {}, {}
    for split in builder.info.splits:
        source = builder.as_data_source(split=split)
        raw = [source[i] for i in range(len(source))]
        splits[str(split)] = [base.canonical(e) for e in raw]
        found[str(split)] = base.kinds(raw)
    return {
        "tfds": tfds.__version__,
        "name": name,
        "config": builder.builder_config.name if builder.builder_config else None,
        "version": str(builder.info.version),
        "features": sorted(builder.info.features.keys()),
        "supervised_keys": base.canonical(builder.info.supervised_keys),
        "splits": splits,
        "kinds": found,
        "declared": base.declared(builder.info.features),
    }


def status_table() -> str:
    """STATUS.json as the markdown docs/guides/tfds-builders.md shows: how many datasets are
    equal, by category, and a table of the others with why (``--table`` prints it; the test
    checks the docs hold it as it is)."""
    data = json.loads((GOLD / "STATUS.json").read_text("utf-8"))["datasets"]
    equal = [n for n, e in data.items() if e["result"] == "equal"]
    kinds = ("text", "structured", "image", "audio", "video")
    by_kind = ", ".join(f"{sum(data[n]['category'] == k for n in equal)} {k}" for k in kinds)
    lines = [
        f"{len(equal)} of the {len(data)} TFDS datasets tried give TFDS's examples ({by_kind}); "
        "the others:",
        "",
        "| dataset | category | result | why |",
        "|---|---|---|---|",
    ]
    for name, entry in sorted(data.items()):
        if entry["result"] != "equal":
            why = entry["why"].replace("|", "\\|")
            lines.append(f"| {name} | {entry['category']} | {entry['result']} | {why} |")
    return "\n".join(lines) + "\n"


def main(names: list[str]) -> int:
    if names == ["--table"]:
        print(status_table(), end="")
        return 0
    if names == ["all"]:
        names = sorted(p.parent.name for p in DUMMY.glob("*/DUMMY.json"))
    GOLD.mkdir(parents=True, exist_ok=True)

    def check(name: str, gold: dict[str, Any]) -> str | None:
        counts, want = {s: len(v) for s, v in gold["splits"].items()}, dummy_spec(name)
        if want.get("splits") and counts != want["splits"]:
            return f"TFDS gives {counts}, DUMMY.json says {want['splits']}"
        return None

    return base.record_golds(
        names,
        lambda name, work: _tfds_gold(name, dummy_spec(name), work),
        lambda name: gold_path(name, dummy_spec(name).get("config")),
        check,
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
