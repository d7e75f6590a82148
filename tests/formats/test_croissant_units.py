"""A Croissant record set read row by row (no random access) and prepared in several units is
read about once, not once per unit from its start (`catalog.formats.resume`): counted as the
rows the row reader reads from the files during a real prepare, in batches (text and numbers)
and example by example (images)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image as PILImage

import catalog.formats.croissant.records as croissant_records
from catalog.api.croissant import croissant_builder

EXAMPLES = Path(__file__).parent.parent / "data" / "croissant"
CONTEXT = json.loads((EXAMPLES / "simple-split" / "metadata.json").read_text())["@context"]
ROWS = 3000


def _field(name: str, kind: str, source: dict[str, Any]) -> dict[str, Any]:
    return {"@type": "cr:Field", "@id": f"rows/{name}", "name": name, "dataType": kind,
            "source": {"fileObject": {"@id": "table"}, **source}}  # fmt: skip


def _croissant(root: Path, file: str, encoding: str, fields: list[dict[str, Any]]) -> Path:
    doc = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "name": "units",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "distribution": [
            {
                "@type": "cr:FileObject",
                "@id": "table",
                "name": "table",
                "contentUrl": file,
                "encodingFormat": encoding,
            }
        ],
        "recordSet": [{"@type": "cr:RecordSet", "@id": "rows", "name": "rows", "field": fields}],
    }
    (root / "metadata.json").write_text(json.dumps(doc))
    return root / "metadata.json"


def _png(seed: int) -> bytes:
    pixels = np.full((2, 2), seed % 256, np.uint8)
    buffer = io.BytesIO()
    PILImage.fromarray(pixels, "L").save(buffer, format="PNG")
    return buffer.getvalue()


def _jsonl(root: Path) -> Path:
    """JSON Lines, a regex on one field: the row reader's (no columns plan)."""
    lines = [json.dumps({"id": i, "name": f"item-{i}-x" * 3}) for i in range(ROWS)]
    (root / "rows.jsonl").write_text("\n".join(lines) + "\n")
    return _croissant(root, "rows.jsonl", "application/jsonlines", [
        _field("id", "sc:Integer", {"extract": {"column": "id"}}),
        _field("name", "sc:Text", {"extract": {"column": "name"},
                                    "transform": {"regex": "^(item-[0-9]+)-x.*$"}}),
    ])  # fmt: skip


def _images(root: Path) -> Path:
    """Parquet of images (the Hub's layout): examples one by one (no batch encoder)."""
    images = [{"bytes": _png(i), "path": None} for i in range(ROWS)]
    pq.write_table(pa.table({"image": images, "label": list(range(ROWS))}), root / "rows.parquet")
    return _croissant(root, "rows.parquet", "application/x-parquet", [
        _field("image", "sc:ImageObject", {"extract": {"column": "image"},
                                            "transform": {"jsonQuery": "bytes"}}),
        _field("label", "sc:Integer", {"extract": {"column": "label"}}),
    ])  # fmt: skip


@pytest.mark.parametrize("make", [_jsonl, _images], ids=["batches", "examples"])
def test_units_read_the_rows_about_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Any
) -> None:
    (tmp_path / "set").mkdir()
    croissant = make(tmp_path / "set")
    b = croissant_builder(croissant, data_dir=tmp_path / "data", download_dir=tmp_path / "dl")
    read = [0]
    rows = croissant_records.file_rows

    def counted(*args: Any) -> Iterator[dict[str, Any]]:
        for row in rows(*args):
            read[0] += 1
            yield row

    monkeypatch.setattr(croissant_records, "file_rows", counted)
    b.download_and_prepare(shard_size=12_000)  # small records share chunks: several units
    units = len(b.info.splits["rows"].shards)
    assert units >= 5
    # the plan reads its first examples, each unit goes on where the last one stopped (and
    # the last one past its end, to check there are no more): once, not units*(units+1)/2
    assert read[0] <= ROWS + 2 * 64 + units
    monkeypatch.undo()
    ds = b.as_data_source(split="rows")
    assert len(ds) == ROWS
    for i in (0, 1, ROWS // 2, ROWS - 1):
        example = ds[i]
        if make is _jsonl:
            assert (int(example["id"]), example["name"]) == (i, f"item-{i}")
        else:
            assert int(example["label"]) == i
            assert np.all(example["image"] == i % 256)
