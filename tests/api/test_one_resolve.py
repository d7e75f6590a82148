"""The resolved dataset travels (docs/architecture.md): each command and `catalog.data_source`
resolves its argument once and opens the generation once, in a local data dir and in a
bucket. Counted in the process itself: how many stores are made, how many times a store opens
a generation (in a bucket: a pointer read and an info read each), and how many times the
registry is asked."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import catalog
from catalog.api import exchange as api_exchange
from catalog.api import resolve as api_resolve
from catalog.cli import main
from catalog.storage import data_dir
from catalog.storage.bucket_store import BucketStore
from catalog.storage.local_store import LocalStore
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder

BUCKET = "s3://data/one-resolve"


def _counting(counts: Counter[str], key: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[key] += 1
        return real(*args, **kwargs)

    return counted


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Stores made, generations opened, registry answers, from here on."""
    found: Counter[str] = Counter()
    monkeypatch.setattr(data_dir, "_store_class", _counting(found, "stores", data_dir._store_class))
    for store in (LocalStore, BucketStore):
        monkeypatch.setattr(store, "open", _counting(found, "opens", store.open))
    for module, name in ((api_resolve, "resolve_registered"), (api_exchange, "resolve")):
        monkeypatch.setattr(module, name, _counting(found, "registry", getattr(module, name)))
    return found


@pytest.fixture(params=["local", "bucket"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    """(builder folder, data dir) of a dataset of 20 examples prepared there."""
    data = str(tmp_path / "data")
    if request.param == "bucket":
        request.getfixturevalue("s3")
        data = BUCKET
    with LoopbackServer() as server:
        folder = idx_builder(tmp_path, server, 20)
        catalog.builder(folder, data_dir=data).download_and_prepare()
    return folder, data


def _at_most_once(counts: Counter[str], what: str) -> None:
    assert counts["stores"] <= 1, f"{what}: {counts['stores']} stores made"
    assert counts["opens"] <= 1, f"{what}: the generation opened {counts['opens']} times"
    assert counts["registry"] <= 1, f"{what}: the registry asked {counts['registry']} times"


@pytest.mark.parametrize(
    "command",
    [
        ["verify"],
        ["info"],
        ["info", "--json"],
        ["show", "-n", "2", "-o", "{tmp}/grid.png"],
        ["prepare"],
        ["croissant"],
        ["export", "--format", "tfrecord", "-o", "{tmp}/exported"],
        ["rm"],
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_each_command_resolves_and_opens_once(
    where: tuple[Path, str],
    counts: Counter[str],
    command: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder, data = where
    counts.clear()
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    code = main([args[0], str(folder), "--data-dir", data, *args[1:]])
    assert code == 0, capsys.readouterr()
    _at_most_once(counts, " ".join(command))


def test_data_source_resolves_and_opens_once(where: tuple[Path, str], counts: Counter[str]) -> None:
    folder, data = where
    counts.clear()
    ds = catalog.data_source(folder, split="train", data_dir=data)
    assert len(ds) > 0  # type: ignore[arg-type]
    _at_most_once(counts, "data_source")


def test_the_counts_see_a_second_resolve(where: tuple[Path, str], counts: Counter[str]) -> None:
    """Not vacuous: resolving twice is counted twice."""
    folder, data = where
    counts.clear()
    for _ in range(2):
        catalog.builder(folder, data_dir=data).open()
    assert counts["stores"] == 2 and counts["opens"] == 2 and counts["registry"] == 2


def test_listing_a_data_dir_makes_its_store_once(
    where: tuple[Path, str], counts: Counter[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``catalog list --prepared`` and ``catalog rm`` of a name nothing answers to name the data
    dir they looked in: the store made for the listing (or the removal) says it."""
    _, data = where
    counts.clear()
    assert main(["list", "--prepared", "--data-dir", data]) == 0
    assert "tiny" in capsys.readouterr().out
    assert counts["stores"] == 1, f"list --prepared: {counts['stores']} stores made"
    counts.clear()
    assert main(["rm", "gone_long_ago", "gone_too", "--data-dir", data]) == 0
    assert "nothing to remove" in capsys.readouterr().out
    assert counts["stores"] == 1, f"rm of unknown names: {counts['stores']} stores made"
