"""Makes tests/data/croissant/: examples from mlcommons/croissant's ``datasets/1.0/`` (Apache
License 2.0, see LICENSE there) whose data is in that repository, kept small: titanic's table
is cut to its first rows (its sha256 in metadata.json updated), and every ``output/*.jsonl``
that is missing or whose data was cut is written again by mlcroissant itself, as their own
test writes it (``record_to_python``); the examples of ``datasets/1.1/`` whose data is in the
repository go to ``v1.1/`` as they are. Run with the dev venv:

    python tests/make_croissant_examples.py CHECKOUT/datasets/1.0 tests/data/croissant
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

EXAMPLES = (
    "simple-parquet", "simple-split", "simple-join", "json-join", "titanic", "coco2014-mini",
    "pass-mini", "audio_test", "recipes", "huggingface-mnist",
)  # fmt: skip
#: Examples of datasets/1.1/ (beside the 1.0 folder) whose data is in the repository.
EXAMPLES_1_1 = ("audio_test", "recipes")
#: Files left out (large, or data no example here reads).
SKIP = ("compressed_archive", "index.html", "live_dataset.json", "multiple_conforms_to.json",
        "default.jsonl")  # fmt: skip
TITANIC_ROWS = 60
TITANIC_FARE_UNKNOWN = 1225
#: (Croissant file, record set) whose output mlcroissant writes again here.
REGENERATE = (
    ("titanic/metadata.json", "passengers"),
    ("recipes/enum.json", "examples"),
    ("recipes/simple-split.json", "books"),
    ("recipes/minimal_recommended.json", "examples"),
)


def main(source: Path, target: Path) -> None:
    for name in EXAMPLES:
        for path in sorted((source / name).rglob("*")):
            if path.is_file() and not any(s in path.name for s in SKIP):
                out = target / name / path.relative_to(source / name)
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, out)
    for name in EXAMPLES_1_1:
        for path in sorted((source.parent / "1.1" / name).rglob("*")):
            if path.is_file() and not any(s in path.name for s in SKIP):
                out = target / "v1.1" / name / path.relative_to(source.parent / "1.1" / name)
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, out)
    table = target / "titanic" / "data" / "titanic.csv"
    lines = table.read_bytes().splitlines(keepends=True)
    # the first rows, and the one row whose fare is '?' (else pandas, under mlcroissant, reads
    # that text column as floats and writes "0.0" for a cell "0")
    kept = [*lines[: TITANIC_ROWS + 1], lines[1 + TITANIC_FARE_UNKNOWN]]
    table.write_bytes(b"".join(kept))
    meta = target / "titanic" / "metadata.json"
    doc = json.loads(meta.read_text())
    doc["distribution"][0]["sha256"] = hashlib.sha256(table.read_bytes()).hexdigest()
    meta.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    import mlcroissant as mlc
    from mlcroissant._src.tests.records import record_to_python

    for file, record_set in REGENERATE:
        records = mlc.Dataset(str(target / file)).records(record_set)
        folder, stem = file.split("/")[0], file.split("/")[1].removesuffix(".json")
        named = record_set if stem == "metadata" else f"{stem}.{record_set}"
        out = target / folder / "output" / f"{named}.jsonl"
        out.write_text(
            "".join(json.dumps(record_to_python(r), ensure_ascii=False) + "\n" for r in records)
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
