"""Every builder's downloads are the facts': each URL, size and sha256 in builder.yaml and
checksums.tsv appears verbatim in tests/data/facts_checksums.tsv, the checksum lines copied
from the dataset facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.spec.load import load_spec
from catalog.spec.local_files import checksum_key

ROOT = Path(__file__).resolve().parents[2]
FACTS = Path(__file__).resolve().parents[1] / "data" / "facts_checksums.tsv"
FOLDERS = sorted(p.parent for p in (ROOT / "builders").glob("*/builder.yaml"))


def facts_lines() -> list[str]:
    lines = FACTS.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line and not line.startswith("#")]


def test_the_facts_copy_is_well_formed_and_used() -> None:
    lines = facts_lines()
    assert len(lines) == len(set(lines))
    used = {
        line for folder in FOLDERS for line in (folder / "checksums.tsv").read_text().splitlines()
    }
    for line in lines:
        _, size, sha256, filename = line.split("\t")
        assert size.isdigit() and len(sha256) == 64 and filename, line
        assert line in used, f"no builder uses {line}"


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_builder_downloads_are_the_facts(folder: Path) -> None:
    facts = {line.split("\t")[0]: line for line in facts_lines()}
    own = [line for line in (folder / "checksums.tsv").read_text().splitlines() if line]
    for line in own:
        assert line in facts.values(), f"{folder.name}: {line!r} is not a line of the facts"
    spec = load_spec(folder)
    specs = [load_spec(folder, config) for config in spec.configs] or [spec]
    used = set()
    for s in specs:
        for d in s.downloads.values():
            if d.manual:  # nobody published its checksum: none is registered
                assert d.size is None and d.sha256 is None, d
                continue
            # the URL, or a builder folder's file by its path there ({builder: ...}: that
            # registered builder's file, in its checksums.tsv)
            key, owner = checksum_key(d, folder), folder
            if key.startswith("file:"):
                owner = next(f for f in FOLDERS if not checksum_key(d, f).startswith("file:"))
                key = checksum_key(d, owner)
            assert key in facts, f"{s.full_name}: {key} is not in the facts"
            if owner != folder:
                assert facts[key] in (owner / "checksums.tsv").read_text().splitlines()
                assert [str(d.size), d.sha256] == facts[key].split("\t")[1:3]
                continue
            _, size, sha256, filename = facts[key].split("\t")
            assert (d.size, d.sha256, d.filename) == (int(size), sha256, filename), d
            used.add(facts[key])
    assert used == set(own), f"{folder.name}: checksums.tsv lines no download uses"
    assert own or all(d.manual or d.url.startswith("file:") for d in spec.downloads.values())
