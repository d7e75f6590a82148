"""Data sources of text and variable-length audio: batched fetches, iteration, DataLoader.

How such examples batch (for the pipeline): text stays a list of str per batch; audio clips
of different lengths are padded to the longest (with their lengths kept) or cropped to a
fixed window; a Sequence of dicts (SQuAD's answers) stays a list of dicts of lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.testing.harness import run_builder

ROOT = Path(__file__).resolve().parents[2]
torch = pytest.importorskip("torch")


def build(name: str, tmp_path: Path, counts: dict[str, int]) -> Any:
    return run_builder(ROOT / "builders" / name, tmp_path, num_examples=counts)


def pad_audio(batch: list[dict[str, Any]]) -> dict[str, Any]:
    """A collate function: clips zero-padded to the longest, with their lengths."""
    lengths = [len(e["audio"]) for e in batch]
    audio = np.zeros((len(batch), max(lengths)), batch[0]["audio"].dtype)
    for row, example in enumerate(batch):
        audio[row, : lengths[row]] = example["audio"]
    return {
        "audio": torch.from_numpy(audio),
        "lengths": torch.tensor(lengths),
        "label": torch.tensor([e["label"] for e in batch]),
    }


def test_variable_length_audio_batches_and_iterates(tmp_path: Path) -> None:
    ds = build("speech_commands", tmp_path, {"train": 5, "validation": 4, "test": 3})["test"]
    fetched = ds.__getitems__([2, 0])
    assert [len(e["audio"]) for e in fetched] == [30, 31]
    assert [e["label"] for e in fetched] == [0, 10]
    assert [len(e["audio"]) for e in ds] == [31, 32, 30]  # iteration: the same examples
    assert ds[0]["audio"].flags.writeable
    supervised = catalog.DataSource(ds.path, ds.info, "test", as_supervised=True)
    audio, label = supervised[1]
    assert (audio.shape, label) == ((32,), 11)
    loader = torch.utils.data.DataLoader(ds, batch_size=2, collate_fn=pad_audio)
    batches = list(loader)
    assert [b["audio"].shape for b in batches] == [(2, 32), (1, 30)]
    assert batches[0]["lengths"].tolist() == [31, 32] and batches[0]["audio"].dtype == torch.int16
    assert batches[0]["audio"][0, 31].item() == 0  # the padding
    np.testing.assert_array_equal(batches[1]["audio"][0].numpy(), ds[2]["audio"])


def test_text_batches_are_lists_of_str(tmp_path: Path) -> None:
    ds = build("imdb_reviews", tmp_path, {"train": 3, "test": 3, "unsupervised": 2})["train"]
    loader = torch.utils.data.DataLoader(ds, batch_size=2)  # default collate: str -> list
    first = next(iter(loader))
    assert first["text"] == ["Dull.<br /><br />I left early.", "Not worth the ticket — really."]
    assert first["label"].tolist() == [0, 0]
    pairs = ds.__getitems__([2, 1])
    assert [p["text"] for p in pairs] == [
        "A joy from start to finish.",
        "Not worth the ticket — really.",
    ]


def test_question_answering_examples_batch_as_lists(tmp_path: Path) -> None:
    ds = build("squad", tmp_path, {"train": 3, "validation": 2})["train"]
    loader = torch.utils.data.DataLoader(ds, batch_size=3, collate_fn=list)
    (batch,) = list(loader)
    assert [len(e["answers"]["text"]) for e in batch] == [1, 0, 2]
    assert batch[0]["question"] == "What character does the school have?"
