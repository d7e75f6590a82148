"""Training loops on pipeline batches: PyTorch (via catalog.torch) and JAX (if installed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.testing.http_server import LoopbackServer
from catalog.transforms import rescale

from conftest import idx_builder

COUNT = 120


@pytest.fixture
def train(tmp_path: Path, server: LoopbackServer) -> catalog.Pipeline:
    folder = idx_builder(tmp_path, server, COUNT)
    ds = catalog.data_source(folder, split="train", data_dir=tmp_path / "data")
    p = catalog.pipeline(ds).shuffle(0).repeat(5).batch(30, drop_remainder=True)
    return p.map_batch(scaled).prefetch(2)


def scaled(batch: dict[str, Any]) -> dict[str, Any]:
    return {"image": rescale(batch["image"]), "label": batch["label"]}


def test_torch_training_loop(train: catalog.Pipeline) -> None:
    torch = pytest.importorskip("torch")
    from catalog.torch import to_torch, to_torch_iter

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(28 * 28, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for batch in to_torch_iter(train):
        assert batch["image"].dtype == torch.float32 and batch["image"].shape == (30, 28, 28, 1)
        assert batch["label"].dtype == torch.int64
        loss = torch.nn.functional.cross_entropy(model(batch["image"]), batch["label"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert len(losses) == 20
    assert np.mean(losses[-4:]) < np.mean(losses[:4])  # it learns from the batches
    shared = np.zeros((2, 3), np.float32)
    tensor = to_torch({"x": (shared,)})["x"][0]
    tensor += 1
    assert shared.sum() == 6  # no copy: the tensor is the array's memory


def test_jax_training_loop(train: catalog.Pipeline) -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from catalog.jax import to_jax_iter

    def loss_fn(w: Any, images: Any, labels: Any) -> Any:
        logits = images.reshape(len(images), -1) @ w
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(len(labels)), labels])

    step = jax.jit(jax.value_and_grad(loss_fn))
    w = jnp.zeros((28 * 28, 10))
    losses = []
    for batch in to_jax_iter(train):
        loss, grad = step(w, batch["image"], batch["label"])
        w = w - 0.01 * grad
        losses.append(float(loss))
    assert len(losses) == 20 and np.mean(losses[-4:]) < np.mean(losses[:4])
