"""Dummy files of VTAB's sources and the fine-grained datasets (food101 ... celeb_a), in each
source's exact layout and file names.

`python tests/make_dummy_data.py NAME` writes them (NAME as in `MAKERS`); the constants here
are what tests/builders/test_builders_vtab.py checks the prepared examples against.
"""

from __future__ import annotations

from collections.abc import Callable

from dummy_images import jpeg, out_dir, tar_bytes

#: food101: split -> the lines of its list (<class>/<id>), in order.
FOOD101 = {
    "train": ["apple_pie/1005649", "waffles/99", "apple_pie/134"],
    "validation": ["baby_back_ribs/2020", "waffles/3001"],
}
FOOD101_LISTS = {"train": "train", "validation": "test"}


def food101_colour(split: str, i: int) -> tuple[int, int, int]:
    return (40 + 60 * i, 200 - 90 * list(FOOD101).index(split), 30 + 20 * i)


def make_food101() -> None:
    members: dict[str, bytes] = {}
    for split, lines in FOOD101.items():
        for i, line in enumerate(lines):
            members[f"food-101/images/{line}.jpg"] = jpeg(6 + i, 5, food101_colour(split, i))
        listing = FOOD101_LISTS[split]
        members[f"food-101/meta/{listing}.txt"] = ("\n".join(lines) + "\n").encode()
        json = "{" + ", ".join(f'"{c}": []' for c in ("apple_pie", "waffles")) + "}"
        members[f"food-101/meta/{listing}.json"] = json.encode()  # the archive has both forms
    members["food-101/meta/classes.txt"] = b"apple_pie\nbaby_back_ribs\nwaffles\n"
    members["food-101/README.txt"] = b"Food-101\n"
    (out_dir("food101") / "food-101.tar.gz").write_bytes(tar_bytes(members, "gz"))


MAKERS: dict[str, Callable[[], None]] = {"food101": make_food101}
