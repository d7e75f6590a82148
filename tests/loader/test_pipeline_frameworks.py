"""Training loops on pipeline batches: PyTorch (via catalog.torch) and JAX (if installed)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.testing.http_server import LoopbackServer
from catalog.transforms import rescale

from conftest import ROOT, idx_builder

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


JAX_LOOP = """
import sys
import numpy as np
import jax
import jax.numpy as jnp
import catalog
from catalog.jax import to_jax_iter
from catalog.transforms import rescale

def scaled(batch):
    return {"image": rescale(batch["image"]), "label": batch["label"]}

def loss_fn(w, images, labels):
    logits = images.reshape(len(images), -1) @ w
    return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(len(labels)), labels])

ds = catalog.data_source(sys.argv[1], split="train", data_dir=sys.argv[2])
train = catalog.pipeline(ds).shuffle(0).repeat(5).batch(30, drop_remainder=True)
step = jax.jit(jax.value_and_grad(loss_fn))
w = jnp.zeros((28 * 28, 10))
losses = []
for batch in to_jax_iter(train.map_batch(scaled).prefetch(2)):
    assert isinstance(batch["image"], jax.Array) and batch["image"].dtype == jnp.float32
    loss, grad = step(w, batch["image"], batch["label"])
    w = w - 0.01 * grad
    losses.append(float(loss))
assert len(losses) == 20 and np.mean(losses[-4:]) < np.mean(losses[:4]), losses
print("ok", len(losses))
"""


def test_jax_training_loop(tmp_path: Path, server: LoopbackServer) -> None:
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed (it is in the test extra: pip install -e '.[test]')")
    folder = idx_builder(tmp_path, server, COUNT)
    catalog.data_source(folder, split="train", data_dir=tmp_path / "data")  # prepare here
    # In a subprocess: importing JAX here would make every later fork in this test run warn
    # (JAX is multithreaded), e.g. the DataLoader tests that fork.
    done = subprocess.run(
        [sys.executable, "-c", JAX_LOOP, str(folder), str(tmp_path / "data")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "20"]
