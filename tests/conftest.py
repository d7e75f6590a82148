"""Shared fixtures: a loopback HTTP server, builder folders whose URLs point at it, the one fake
S3 (``s3``), and the CLI run as a user runs it."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from catalog.testing.http_server import LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

from s3server import S3Server, serve_s3

ROOT = Path(__file__).resolve().parent.parent
#: The registered datasets' builder folders.
BUILDERS = ROOT / "builders"
DATA = Path(__file__).resolve().parent / "data"
FIRST50 = DATA / "fashion_mnist_first50"
#: The real labels of the first 50 Fashion-MNIST test images (shared/data README).
FIRST50_LABELS = [
    9, 2, 1, 1, 6, 1, 4, 6, 5, 7, 4, 5, 7, 3, 4, 1, 2, 4, 8, 0, 2, 5, 7, 9, 1,
    4, 6, 0, 9, 3, 8, 8, 3, 3, 8, 0, 7, 5, 7, 9, 6, 1, 3, 7, 6, 7, 2, 1, 2, 2,
]  # fmt: skip


def load_module(path: Path) -> Any:
    """The Python file at `path` (a tool, a fixture maker) imported as a module of its own
    name, without it being on the import path."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_builder_facts(name: str, facts: tuple[str, dict[str, int], dict[str, Any]]) -> Any:
    """`catalog.builder(name)`, checked to have the facts' (version, {split: examples},
    {feature: (type, detail)}): the detail is a ClassLabel's number of classes, None for a
    nested Sequence or FeaturesDict, and the shape of any other feature."""
    import catalog
    from catalog.features import ClassLabel

    version, splits, features = facts
    b = catalog.builder(name)
    assert b.version == version
    assert {s: x.num_examples for s, x in b.spec.splits.items()} == splits
    got = {
        key: (f.type_name, f.num_classes if isinstance(f, ClassLabel)
              else None if f.type_name in ("Sequence", "FeaturesDict")
              else f.shape)  # type: ignore[attr-defined]
        for key, f in b.spec.features.items()
    }  # fmt: skip
    assert got == features
    return b


def catalog_cli(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str | None] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """``python -m catalog ARGS`` in a subprocess, its output captured as text. `env` changes
    this process's environment for it: a name set to None is removed."""
    environ = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=timeout, cwd=cwd, env=environ,
    )  # fmt: skip


@contextlib.contextmanager
def ctrl_c_reaches_children() -> Iterator[None]:
    """Processes started inside get Ctrl-C (SIGINT) as a terminal's programs do. A test run
    started as a background job (``cmd &`` in a script) ignores SIGINT, every child inherits
    that, and Python then installs no KeyboardInterrupt handler: a test of what Ctrl-C does
    would fail. A handler set here is reset to the default by the children's exec."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def _user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("user-cache")


@pytest.fixture(autouse=True)
def _no_user_settings(monkeypatch: pytest.MonkeyPatch, _user_cache: Path) -> None:
    """Tests never see the developer's CATALOG_* settings (offline mode, mirrors, dirs), nor
    write into the developer's cache dir (the registry's listing index, the shard cache): the
    user cache dir is one of this test session's (a test may still set its own)."""
    for name in [n for n in os.environ if n.startswith("CATALOG_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CACHE_HOME", str(_user_cache))


@pytest.fixture
def tmp_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$CATALOG_DATA_DIR set to a temporary data dir (indexes of TFRecord shards go there)."""
    monkeypatch.setenv("CATALOG_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[S3Server]:
    """A fresh S3 server on 127.0.0.1 (tests/s3server.py) for this test: the standard AWS
    variables point at it, it holds an empty bucket ``data``, and downloads go to tmp_path."""
    monkeypatch.setenv("CATALOG_DOWNLOAD_DIR", str(tmp_path / "downloads"))
    with serve_s3(monkeypatch) as server:
        yield server


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as s:
        yield s


def write_builder(
    folder: Path,
    server: LoopbackServer,
    files: dict[str, bytes],
    *,
    name: str = "tiny",
    splits: dict[str, tuple[str, str, int]] | None = None,
    register: bool = True,
) -> Path:
    """Write an IDX builder folder whose downloads are `files`, served by `server`.

    `splits` maps split -> (images file, labels file, expected count).
    """
    folder.mkdir(parents=True, exist_ok=True)
    downloads, checksums = [], []
    for filename, data in files.items():
        url = server.add(f"/files/{name}/{filename}", data)
        key = filename.replace("-", "_").replace(".", "_")
        downloads.append(f"  {key}: {{url: {url}}}")
        checksums.append(f"{url}\t{len(data)}\t{hashlib.sha256(data).hexdigest()}\t{filename}")
    split_lines = []
    for split, (images, labels, count) in (splits or {}).items():
        ikey, lkey = (f.replace("-", "_").replace(".", "_") for f in (images, labels))
        split_lines.append(
            f"  {split}:\n    format: idx\n    files: {{images: {ikey}, labels: {lkey}}}\n"
            f"    num_examples: {count}"
        )
    spec = (
        textwrap.dedent(f"""\
        name: {name}
        version: 1.0.0
        description: A tiny test dataset.
        features:
          image: {{type: Image, shape: [28, 28, 1]}}
          label: {{type: ClassLabel, num_classes: 10}}
        downloads:
        """)
        + "\n".join(downloads)
        + "\nsplits:\n"
        + "\n".join(split_lines)
        + "\n"
    )
    (folder / "builder.yaml").write_text(spec)
    if register:
        (folder / "checksums.tsv").write_text("\n".join(checksums) + "\n")
    return folder


def idx_builder(root: Path, server: LoopbackServer, count: int, *, name: str = "tiny") -> Path:
    """A builder folder of `count` pattern images (catalog.testing.idx_files) in one split,
    "train", served by `server`; files and folder live under `root`."""
    files = {}
    for role, array in (("i.gz", pattern_images(count)), ("l.gz", pattern_labels(count))):
        files[role] = write_idx(root / f"{name}-{role}", array).read_bytes()
    return write_builder(
        root / name, server, files, name=name, splits={"train": ("i.gz", "l.gz", count)}
    )


@pytest.fixture
def first50_builder(tmp_path: Path, server: LoopbackServer) -> Path:
    """A builder of the 50 real Fashion-MNIST test images, served over loopback HTTP."""
    files = {p.name: p.read_bytes() for p in sorted(FIRST50.glob("*.gz"))}
    folder = write_builder(
        tmp_path / "builders" / "first50",
        server,
        files,
        name="first50",
        splits={"test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", 50)},
    )
    # The real class names, so label names can be checked too.
    spec = (folder / "builder.yaml").read_text()
    names = (
        (ROOT / "builders/fashion_mnist/builder.yaml")
        .read_text()
        .split("names: ")[1]
        .split("\n")[0]
    )
    spec = spec.replace(
        "label: {type: ClassLabel, num_classes: 10}", f"label: {{type: ClassLabel, names: {names}}}"
    )
    (folder / "builder.yaml").write_text(spec)
    return folder


#: A prepare that is killed (SIGKILL: nothing cleans up) once it has written N shards.
_KILL_AFTER = """\
import os, signal, sys
import catalog
from catalog.prepare.options import PrepareOptions
from catalog.prepare.progress import PrepareProgress

class KillAfter(PrepareProgress):
    def unit_done(self, outcome, *, ticked=0):
        super().unit_done(outcome, ticked=ticked)
        if self.written == int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)

b = catalog.builder(sys.argv[1], data_dir=sys.argv[2])
b.prepare(PrepareOptions(shard_bytes=int(sys.argv[4])), progress=KillAfter(b.full_name, "none"))
"""


def kill_prepare_after(folder: Path, data_dir: Path, units: int, shard_bytes: int) -> None:
    """Prepare `folder` into `data_dir` in a real process that SIGKILLs itself once `units`
    shards are written, as an OOM killer or a lost machine would."""
    args = [str(folder), str(data_dir), str(units), str(shard_bytes)]
    killed = subprocess.run([sys.executable, "-c", _KILL_AFTER, *args], timeout=300)
    assert killed.returncode == -9, killed


def tabular_builder(
    root: Path,
    server: LoopbackServer,
    name: str,
    values: Any,
    labels: list[int],
    classes: list[str],
) -> Path:
    """A builder without images, served from `server`: an `npz` of a float32 Tensor feature
    (`values`, one row per example) and a ClassLabel of `classes` (`labels`)."""
    buffer = io.BytesIO()
    array = np.asarray(values, np.float32)
    np.savez(buffer, values=array, labels=np.asarray(labels))
    data = buffer.getvalue()
    url = server.add(f"/{name}.npz", data)
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "builder.yaml").write_text(
        f"name: {name}\nversion: 1.0.0\ndescription: {name.title()}.\ntags: [tabular]\n"
        f"features:\n  values: {{type: Tensor, shape: [{array.shape[1]}], dtype: float32}}\n"
        f"  label: {{type: ClassLabel, names: [{', '.join(classes)}]}}\n"
        f"downloads:\n  arrays: {{url: {url}}}\n"
        "splits:\n  train:\n    format: npz\n    files: {arrays: arrays}\n"
        "    options: {arrays: {values: values, label: labels}}\n"
        f"    num_examples: {len(labels)}\n"
    )
    digest = hashlib.sha256(data).hexdigest()
    (folder / "checksums.tsv").write_text(f"{url}\t{len(data)}\t{digest}\t{name}.npz\n")
    return folder


@contextlib.contextmanager
def small_disk(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted at `path` (skips when it cannot be mounted)."""
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"a small disk needs a tmpfs, which cannot be mounted here: {mounted.stderr}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


@pytest.fixture
def no_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pillow's image opener made to fail: whatever still decodes did not fall back to it
    (the photo path's tests, issue 29)."""
    from PIL import Image as PILImage

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the fast path fell back to Pillow")

    monkeypatch.setattr(PILImage, "open", refuse)
