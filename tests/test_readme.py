"""The README's facts come from the code and stay true: the `list_datasets()` example, every
registered dataset in a table, and every link to a section of the README."""

from __future__ import annotations

import re
from pathlib import Path

import catalog

README = (Path(__file__).resolve().parent.parent / "README.md").read_text("utf-8")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_the_list_datasets_example_shows_the_registry() -> None:
    names = catalog.list_datasets()
    (shown,) = re.findall(r"catalog\.list_datasets\(\) +# \[(.*)\]", README)
    first, second, _, last = (part.strip(" '") for part in shown.split(","))
    assert [first, second, last] == [names[0], names[1], names[-1]]


def test_every_registered_dataset_is_in_a_readme_table() -> None:
    rows = " ".join(line for line in README.splitlines() if line.startswith("|"))
    missing = [name for name in catalog.list_datasets() if not re.search(rf"\b{name}\b", rows)]
    assert not missing, f"datasets missing from the README's tables: {missing}"


def test_section_links_point_at_headings() -> None:
    headings = {slug(h) for h in re.findall(r"^#+ (.+)$", README, flags=re.M)}
    links = set(re.findall(r"\]\(#([^)]+)\)", README))
    assert links, "the contents list links to sections"
    assert links <= headings, f"links to no heading: {sorted(links - headings)}"


def test_no_stale_dataset_counts() -> None:
    """Counts of datasets are not written down by hand (they went stale before)."""
    count = len(catalog.list_datasets())
    for claimed in re.findall(r"\b(?:all )?(\d+) (?:registered )?datasets\b", README):
        assert int(claimed) == count, f"the README says {claimed} datasets, there are {count}"
