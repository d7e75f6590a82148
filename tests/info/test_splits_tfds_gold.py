"""Catalog's split specs select what TFDS 4.9.10's own split parsing selects.

tests/info/tfds_split_gold.json holds, for several hundred split specs (names, ``+``, absolute,
percent and shard slices, negative bounds, ``pct1_dropremainder``, ``all``, empty and
past-the-end slices, malformed specs, ``even_splits`` parts) read against given shard
lengths, the examples TFDS's readers read (``tools/tfds_split_cases.py`` evaluates them with
TFDS's code, run with tensorflow-datasets installed) or the error TFDS raises. Every case
must select the same examples in catalog or be refused by both, except the deliberate
differences in `DELIBERATE` (docs/guides/tfds-differences.md, "Split specs").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from catalog.errors import SplitError
from catalog.info.splits import ReadInstruction, even_splits, resolve

from conftest import load_module

ROOT = Path(__file__).resolve().parents[2]
tool = load_module(ROOT / "tools" / "tfds_split_cases.py")

GOLD = json.loads((ROOT / "tests" / "info" / "tfds_split_gold.json").read_text("utf-8"))
CASES = {tool.case_id(case): case for case in GOLD["cases"]}


def catalog_answer(case: dict[str, Any]) -> dict[str, Any]:
    """What catalog selects for `case`, in the gold's form: nonempty pieces, or an error."""
    sizes = GOLD["sizes"][case["sizes"]]
    try:
        if "spec" in case:
            got = resolve(case["spec"], sizes)
        elif "instruction" in case:
            got = ReadInstruction(**case["instruction"]).to_absolute(sizes)
        else:
            e = case["even"]
            part = even_splits(e["split"], e["n"], drop_remainder=e["drop_remainder"])[e["index"]]
            got = part.to_absolute(sizes)
    except SplitError as error:
        return {"error": "SplitError", "message": str(error)}
    return {"pieces": [[name, rows.start, rows.stop] for name, rows in got if len(rows)]}


def _case(kind: str) -> list[str]:
    return [key for key, case in CASES.items() if kind(case)]  # type: ignore[operator]


#: Where catalog deliberately answers otherwise than TFDS, and why (the guide's list).
DELIBERATE: dict[str, str] = {
    **{
        key: "a reversed slice (start after stop) selects nothing, as a Python slice does; "
        "TFDS hands tf.data a negative take, which reads to the end of the shard"
        for key in _case(lambda c: c.get("spec", "").endswith("[5:2]"))
        if CASES[key]["tfds"].get("pieces")
    },
}


def _same(tfds: dict[str, Any], got: dict[str, Any]) -> bool:
    if "error" in tfds or "error" in got:
        return ("error" in tfds) == ("error" in got)
    return tfds["pieces"] == got["pieces"]  # none: TFDS's reader refuses, catalog reads none


@pytest.mark.parametrize("key", sorted(CASES))
def test_split_specs_select_what_tfds_selects(key: str) -> None:
    case = CASES[key]
    got = catalog_answer(case)
    if key in DELIBERATE:
        assert not _same(case["tfds"], got), f"no longer differs: {DELIBERATE[key]}"
        return
    assert _same(case["tfds"], got), (key, case["tfds"], got)


def test_the_gold_covers_every_kind_of_spec() -> None:
    specs = [c["spec"] for c in CASES.values() if "spec" in c]
    for form in ("+", "%", "shard", "-", "all", "[0:0]", "_"):
        assert any(form in s for s in specs), form
    assert any(c.get("instruction", {}).get("rounding") == "pct1_dropremainder"
               for c in CASES.values())  # fmt: skip
    assert sum("even" in c for c in CASES.values()) > 20
    assert sum("error" in c["tfds"] for c in CASES.values()) > 50  # refusals are checked too
    assert sum(not c["tfds"].get("pieces", [1]) for c in CASES.values()) > 10  # empty reads


def test_how_many_hold() -> None:
    """The count the issue asks for: cases equal to TFDS / all cases (deliberate ones apart)."""
    same = sum(_same(c["tfds"], catalog_answer(c)) for c in CASES.values())
    assert same == len(CASES) - len(DELIBERATE), (same, len(CASES), sorted(DELIBERATE))
