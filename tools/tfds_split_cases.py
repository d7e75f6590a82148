"""What TFDS 4.9.10's own split parsing selects for a broad set of split specs, as a gold file.

Each case is a split spec (a string, a ``ReadInstruction``, a sum, or a part of
``even_splits``) and the split sizes (each split's shard lengths) it is read against. This
tool evaluates every case with TensorFlow Datasets' own code, the path its readers take:
``AbstractSplit.from_spec`` -> ``to_absolute(split_infos)`` -> ``shard_utils.
get_file_instructions`` (the skip/take per shard a reader reads), and writes the examples
those file instructions read (as ``[split, start, stop]`` pieces, empty pieces left out), or
the error TFDS raises, to ``tests/info/tfds_split_gold.json``.
``tests/info/test_splits_tfds_gold.py`` checks, in CI, that catalog's split parsing selects
the same examples or refuses the same cases. Run it with tensorflow-datasets installed (never
a dependency of catalog), from the repository root:

    /work/venvs/tf/bin/python tools/tfds_split_cases.py

A file instruction's ``take`` is what ``tf.data``'s ``take`` is given: -1 (and any negative
count) reads to the end of the shard. A spec whose file instructions are empty has no
pieces: TFDS's reader then refuses it ("corresponds to no data").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOLD = ROOT / "tests" / "info" / "tfds_split_gold.json"

#: Named split sizes: split -> its shard lengths (the order is the dataset's split order).
SIZES: dict[str, dict[str, list[int]]] = {
    "one_shard": {"train": [1000], "test": [250], "validation": [30]},
    "shards": {"train": [300, 300, 400], "test": [7, 0, 5], "dev-train": [5, 5]},
    "tiny": {"train": [3], "test": [0]},
}

#: Selectors tried on each split of each size.
SELECTORS = [
    "",
    "[:10]",
    "[10:]",
    "[10:20]",
    "[-10:]",
    "[:-10]",
    "[-20:-10]",
    "[1_0:2_0]",
    "[:10%]",
    "[10%:]",
    "[25%:75%]",
    "[-10%:]",
    "[:-10%]",
    "[33%:66%]",
    "[:50%]",
    "[50%:]",
    "[:-50%]",
    "[:35%]",
    "[:12.5%]",
    "[:100%]",
    "[-100%:]",
    "[0%:0%]",
    "[:0]",
    "[0:0]",
    "[5:2]",
    "[2:2]",
    "[-1:]",
    "[:-1]",
    "[0shard]",
    "[1shard]",
    "[2shard]",
    "[3shard]",
    "[:1shard]",
    "[:2shard]",
    "[:5shard]",
    "[1shard:]",
    "[-1shard:]",
    "[:-1shard]",
    "[1shard:9shard]",
    "[0shard:0shard]",
    "[:1001]",
    "[-1001:]",
    "[1000:]",
    "[1000:1000]",
    "[:31]",
    "[-31:]",
    "[:4]",
    "[:101%]",
    "[-101%:]",
    "[:250%:2]",
    "[1.5:3]",
    "[10]",
    "[10%]",
    "[::]",
    "[:]",
    "[]",
    "[a:b]",
    "[:10abs]",
    "[:10%shard]",
    "[ :10]",
]

#: Whole specs (not split + selector).
SPECS = [
    "train+test",
    "train[:10]+test[-5:]",
    "train[:10] + test[-1:]",
    "train+train",
    "test+train[:1%]",
    "all",
    "all[:10%]",
    "all+train[:1]",
    "imaginary",
    "Train",
    "train[:10]+imaginary",
    "",
    "+",
    "train+",
    " train",
    "train ",
    "train[:50%]+train[50%:]",
    "dev-train[1shard]+train[:1shard]",
    "test[-1%:]+validation[10:]",
]

#: ReadInstruction(split, from_, to, unit, rounding) cases.
INSTRUCTIONS: list[dict[str, Any]] = [
    {"split_name": "train", "to": 20, "unit": "%", "rounding": "pct1_dropremainder"},
    {"split_name": "train", "from_": 20, "to": 60, "unit": "%", "rounding": "pct1_dropremainder"},
    {"split_name": "train", "from_": -5, "unit": "%", "rounding": "pct1_dropremainder"},
    {"split_name": "train", "to": 100, "unit": "%", "rounding": "pct1_dropremainder"},
    {"split_name": "train", "to": 99, "unit": "%", "rounding": "pct1_dropremainder"},
    {"split_name": "test", "to": 50, "unit": "%", "rounding": "pct1_dropremainder"},
    {"split_name": "test", "from_": 99, "unit": "%", "rounding": "pct1_dropremainder"},
    {"split_name": "validation", "to": 50, "unit": "%", "rounding": "pct1_dropremainder"},
    {"split_name": "train", "from_": 10, "to": 20},
    {"split_name": "train", "from_": -20, "to": -10},
    {"split_name": "train", "from_": 1, "unit": "shard"},
    {"split_name": "train", "to": -1, "unit": "shard"},
    {"split_name": "train", "from_": 1, "to": 2, "unit": "shard"},
    {"split_name": "train", "to": 33.3, "unit": "%"},
    {"split_name": "train", "from_": 12.5, "to": 87.5, "unit": "%"},
    {"split_name": "train", "to": 10, "unit": "parts"},
    {"split_name": "train", "to": 10, "unit": "%", "rounding": "floor"},
    {"split_name": "train", "to": 150, "unit": "%"},
    {"split_name": "imaginary"},
]

#: even_splits(split, n, drop_remainder)[index] (what split_for_jax_process gives index of n).
EVEN: list[tuple[str, int, bool]] = [
    ("train", 1, False), ("train", 3, False), ("train", 3, True), ("train", 7, False),
    ("train", 7, True), ("test", 4, False), ("test", 4, True), ("train[:10%]+test", 3, False),
    ("train[:10%]+test", 3, True), ("validation[5:7]", 3, False), ("validation[5:7]", 3, True),
    ("test[:1]", 2, False), ("all", 2, False),
]  # fmt: skip


def cases() -> list[dict[str, Any]]:
    """Every case: an id, the sizes it is read against, and what to evaluate."""
    out: list[dict[str, Any]] = []
    for sizes, splits in SIZES.items():
        for name in splits:
            for selector in SELECTORS:
                out.append({"sizes": sizes, "spec": name + selector})
        for spec in SPECS:
            out.append({"sizes": sizes, "spec": spec})
        for instruction in INSTRUCTIONS:
            if instruction["split_name"] in splits or instruction["split_name"] == "imaginary":
                out.append({"sizes": sizes, "instruction": instruction})
        for split, n, drop in EVEN:
            if split.split("[")[0] in splits or split == "all":
                for index in range(n):
                    even = {"split": split, "n": n, "drop_remainder": drop, "index": index}
                    out.append({"sizes": sizes, "even": even})
    unique = {case_id(case): case for case in out}  # a spec in SPECS and SELECTORS: once
    return list(unique.values())


def case_id(case: dict[str, Any]) -> str:
    if "spec" in case:
        what = repr(case["spec"])
    elif "instruction" in case:
        args = ", ".join(f"{k}={v!r}" for k, v in case["instruction"].items())
        what = f"ReadInstruction({args})"
    else:
        e = case["even"]
        what = f"even_splits({e['split']!r}, {e['n']}, drop={e['drop_remainder']})[{e['index']}]"
    return f"{case['sizes']}: {what}"


def _tfds_answer(case: dict[str, Any]) -> dict[str, Any]:
    from tensorflow_datasets.core import splits as splits_lib
    from tensorflow_datasets.core import subsplits_utils
    from tensorflow_datasets.core.utils import shard_utils

    sizes = SIZES[case["sizes"]]
    infos = splits_lib.SplitDict(
        [splits_lib.SplitInfo(name=n, shard_lengths=s, num_bytes=0) for n, s in sizes.items()]
    )
    try:
        if "spec" in case:
            split = splits_lib.AbstractSplit.from_spec(case["spec"])
        elif "instruction" in case:
            split = splits_lib.ReadInstruction(**case["instruction"])
        else:
            e = case["even"]
            parts = subsplits_utils.even_splits(
                e["split"], e["n"], drop_remainder=e["drop_remainder"]
            )
            split = parts[e["index"]]
        absolute = split.to_absolute(infos)
        pieces = []
        for instruction in absolute:
            lengths = sizes[str(instruction.splitname)]
            if not sum(lengths):  # TFDS: "Split has no examples", no file instructions
                continue
            to = sum(lengths) if instruction.to is None else instruction.to
            names = [str(i) for i in range(len(lengths))]
            got = shard_utils.get_file_instructions(instruction.from_ or 0, to, names, lengths)
            first = len(pieces)
            for file in got:
                shard = int(file.filename)
                offset = sum(lengths[:shard])
                take = lengths[shard] - file.skip if file.take < 0 else file.take
                start, stop = offset + file.skip, offset + file.skip + take
                if len(pieces) > first and pieces[-1][2] == start:
                    pieces[-1][2] = stop  # one piece across shards
                else:
                    pieces.append([str(instruction.splitname), _int(start), _int(stop)])
    except Exception as error:  # what TFDS refuses, and how
        return {"error": type(error).__name__, "message": str(error).strip().splitlines()[-1]}
    return {"pieces": pieces}  # none: TFDS's reader refuses it ("corresponds to no data")


def _int(value: Any) -> int:
    if int(value) != value:
        raise ValueError(f"a fractional example index {value!r}")
    return int(value)


def main() -> int:
    import tensorflow_datasets as tfds

    every = cases()
    for case in every:
        case["tfds"] = _tfds_answer(case)
    gold = {"tfds": tfds.__version__, "sizes": SIZES, "cases": every}
    lines = ",\n".join(json.dumps(case, sort_keys=True) for case in every)
    head = json.dumps({k: v for k, v in gold.items() if k != "cases"})  # splits in order
    GOLD.write_text(f'{head[:-1]}, "cases": [\n{lines}\n]}}\n', "utf-8")  # a case a line
    errors = sum("error" in c["tfds"] for c in every)
    print(f"{len(every)} cases ({errors} refused by TFDS) -> {GOLD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
