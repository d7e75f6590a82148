"""The README and the documentation pages (docs/) stay true and navigable: the README is the
short front page (what catalog is, the two set-up commands, a tour with a picture, links into
docs/), every relative link and anchor resolves, the dataset tables list the registry, and
the facts taken from the code match it. (`mkdocs build --strict` checks the site's links
too; this runs without the docs tools.)"""

from __future__ import annotations

import re
from pathlib import Path

import catalog

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
#: Every page: the README and docs/ (the generated pages are not files).
PAGES = {
    path: path.read_text("utf-8")
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
}
ALL_TEXT = "\n".join(PAGES.values())
#: Pages docs/hooks/catalog_docs.py generates at build time (the strict build checks links there).
GENERATED = {ROOT / "docs" / "reference" / "cli.md", ROOT / "docs" / "reference" / "api.md"}


def slug(heading: str) -> str:
    """The anchor of a heading (GitHub's and MkDocs' toc): lower case, punctuation dropped,
    spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def headings(text: str) -> set[str]:
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # comments in code blocks
    return {slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def test_the_readme_is_the_front_page() -> None:
    commands = re.findall(r"^(python -m pip install .*?)  +#", README, flags=re.M)
    assert commands[:2] == [
        "python -m pip install -e . && catalog prepare fashion_mnist",
        "python -m pip install -e '.[test]' && python -m pytest -n 2",
    ]
    assert "![" in README and "(docs/fashion_mnist_show.png)" in README
    assert len(README.splitlines()) <= 80, "the README is the front page; details go to docs/"
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", README))
    guides = {f"docs/{p.relative_to(ROOT / 'docs')}" for p in (ROOT / "docs/guides").glob("*.md")}
    assert guides <= linked, f"guides the README does not link: {sorted(guides - linked)}"


def test_the_docs_command_is_in_the_readme() -> None:
    assert re.search(r"^python -m pip install -e '\.\[docs\]' && mkdocs build --strict", README,
                     flags=re.M)  # fmt: skip


def test_relative_links_point_at_files_and_headings() -> None:
    bad = []
    for page, text in PAGES.items():
        prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            if path.endswith(".html"):  # the generated pages: checked by the strict build
                continue
            file = (page.parent / path).resolve() if path else page
            if file in GENERATED:
                continue
            if not file.exists():
                bad.append(f"{page.relative_to(ROOT)}: {target}: no such file")
            elif anchor and anchor not in headings(file.read_text("utf-8")):
                bad.append(f"{page.relative_to(ROOT)}: {target}: no such heading")
    assert not bad, bad


def test_the_list_datasets_example_shows_the_registry() -> None:
    names = catalog.list_datasets()
    (shown,) = re.findall(r"catalog\.list_datasets\(\) +# \[(.*)\]", ALL_TEXT)
    first, second, _, last = (part.strip(" '") for part in shown.split(","))
    assert [first, second, last] == [names[0], names[1], names[-1]]


def test_every_registered_dataset_is_in_a_table() -> None:
    text = PAGES[ROOT / "docs" / "datasets.md"]
    rows = " ".join(line for line in text.splitlines() if line.startswith("|"))
    missing = [name for name in catalog.list_datasets() if not re.search(rf"\b{name}\b", rows)]
    assert not missing, f"datasets missing from docs/datasets.md's tables: {missing}"


def test_no_stale_dataset_counts() -> None:
    """Counts of datasets are not written down by hand (they went stale before)."""
    count = len(catalog.list_datasets())
    for claimed in re.findall(r"\b(?:all )?(\d+) (?:registered )?datasets\b", ALL_TEXT):
        assert int(claimed) == count, f"the docs say {claimed} datasets, there are {count}"


def test_no_timing_claims_without_a_measurement() -> None:
    """`catalog info` was called "instant" while it took 0.6 s: speed words need numbers."""
    assert not re.search(r"\binstant(ly)?\b", ALL_TEXT, flags=re.I)
