"""`catalog.formats.base.staged`: a reader's folder in the scratch folder (an index, staged
arrays), written once, atomically, reused after; in a temporary folder without a scratch
folder; nothing left behind when writing it fails. `coco_json` and `image_tar` stage their
indexes through it."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from catalog.features import FeaturesDict, Scalar
from catalog.formats.base import Source, staged


def _source(scratch: Path | None) -> Source:
    return Source("train", {}, {}, FeaturesDict({"x": Scalar("int64")}), scratch)


def test_written_once_in_scratch_then_reused(tmp_path: Path) -> None:
    calls: list[Path] = []

    def write(to: Path) -> None:
        calls.append(to)
        to.mkdir()
        (to / "index").write_text("made")

    folder, temp = staged(_source(tmp_path / "scratch"), "idx", write)
    assert temp is None and folder == tmp_path / "scratch" / "idx"
    assert (folder / "index").read_text() == "made"
    assert calls[0].name.startswith("idx.partial-")  # written aside, renamed whole
    again, _ = staged(_source(tmp_path / "scratch"), "idx", write)
    assert again == folder and len(calls) == 1
    assert sorted(p.name for p in (tmp_path / "scratch").iterdir()) == ["idx"]


def test_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    def write(to: Path) -> None:
        to.mkdir()
        (to / "half").write_text("x")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        staged(_source(tmp_path), "idx", write)
    assert list(tmp_path.iterdir()) == []


def test_another_process_made_it_first(tmp_path: Path) -> None:
    """A concurrent reader renamed its folder into place first: this one's is dropped."""

    def write(to: Path) -> None:
        (to.parent / "idx").mkdir()
        (to.parent / "idx" / "index").write_text("theirs")
        to.mkdir()
        (to / "index").write_text("ours")

    folder, _ = staged(_source(tmp_path), "idx", write)
    assert (folder / "index").read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]


def test_without_scratch_a_temporary_folder_the_caller_cleans_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder, temp = staged(_source(None), "idx", lambda to: to.mkdir())
    assert temp is not None and folder.is_dir() and folder.parent == Path(temp.name)
    temp.cleanup()
    assert list(tmp_path.iterdir()) == []

    def fail(to: Path) -> None:
        raise ValueError("bad file")

    with pytest.raises(ValueError, match="bad file"):
        staged(_source(None), "idx", fail)
    assert list(tmp_path.iterdir()) == []  # its temporary folder went with it
