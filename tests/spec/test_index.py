"""The registry's index (`catalog.spec.index`): `catalog list` reads summaries, loading a spec
again only when its builder.yaml or checksums.tsv changed.

The registry here is 1,000 builder folders written by the test (one in ten with configs),
listed through the CLI's own `main` with `registry_file` pointed at them; spec loads are
counted by wrapping `catalog.spec.load.load_spec`, which is where every full parse goes.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from catalog.cli import main
from catalog.spec import index, load, registry

BUILDER = """\
name: {name}
version: 1.{minor}.0
tags: [tabular, {tag}]
description: Synthetic dataset {name}, rows of four numbers and a class.
features:
  features: {{type: Tensor, shape: [4], dtype: float32}}
  label: {{type: ClassLabel, names: [a, b, c]}}
downloads:
  archive: {{url: https://example.org/{name}.zip}}
splits:
  train:
    format: delimited
    files: {{file: {{download: archive, member: {name}.csv}}}}
    options: {{header: [m1, m2, m3, m4, c], stack: {{features: [m1, m2, m3, m4]}},
               columns: {{label: c}}}}
    num_examples: {count}
"""
CONFIGS = """\
configs:
  small: {description: the first rows}
  large: {description: every row}
default_config: large
"""
COUNT = 1000


@contextlib.contextmanager
def restored(*paths: Path) -> Iterator[None]:
    """Put `paths` back as they were (content and mtime) afterwards: the registry is shared
    by the tests, and its index copied from one listing of it."""
    saved = [(p, p.read_bytes(), p.stat()) for p in paths]
    try:
        yield
    finally:
        for path, data, st in saved:
            path.write_bytes(data)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def write_builder(folder: Path, i: int, count: int | None = None) -> None:
    name = f"synth_{i:04d}"
    folder.mkdir(exist_ok=True)
    tag = "tabular-classification" if i % 2 else "tabular-regression"
    text = BUILDER.format(name=name, minor=i % 7, tag=tag, count=count or 100 + i)
    (folder / "builder.yaml").write_text(text + (CONFIGS if i % 10 == 0 else ""))
    (folder / "checksums.tsv").write_text(
        f"https://example.org/{name}.zip\t{1000 + i}\t{i:064x}\t{name}.zip\n"
    )


@pytest.fixture(scope="module")
def builders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("registry")
    for i in range(COUNT):
        write_builder(root / f"synth_{i:04d}", i)
    lines = [f"  synth_{i:04d}: synth_{i:04d}" for i in range(COUNT)]
    (root / "registry.yaml").write_text("datasets:\n" + "\n".join(lines) + "\n")
    return root


@pytest.fixture(scope="module")
def warm_cache(builders: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache dir holding the index of `builders`, written by one cold listing (which loads
    every spec once: the test below checks that it did)."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(registry, "registry_file", lambda: builders / "registry.yaml")
        patch.setenv("XDG_CACHE_HOME", str(cache))
        loads: list[str] = []
        real = load.load_spec
        patch.setattr(load, "load_spec", lambda f, c=None: loads.append(Path(f).name) or real(f, c))
        code, out, _ = run_list()
    (cache / "cold.txt").write_text(f"{code}\n{len(loads)}\n{out}")
    return cache


@pytest.fixture
def listing(
    builders: Path, warm_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, list[str]]:
    """The registry above, a cache dir holding its index (a copy: tests change it), and a
    log of spec loads."""
    monkeypatch.setattr(registry, "registry_file", lambda: builders / "registry.yaml")
    shutil.copytree(warm_cache, tmp_path / "cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    loads: list[str] = []
    real = load.load_spec

    def counted(folder: str | Path, config: str | None = None) -> object:
        loads.append(Path(folder).name)
        return real(folder, config)

    monkeypatch.setattr(load, "load_spec", counted)
    return builders, loads


def run_list(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["list", *args])
    return code, out.getvalue(), err.getvalue()


def test_a_warm_index_lists_a_thousand_builders_without_loading_a_spec(
    listing: tuple[Path, list[str]], warm_cache: Path
) -> None:
    _, loads = listing
    code, count, first = (warm_cache / "cold.txt").read_text().split("\n", 2)
    assert code == "0" and int(count) == COUNT + 2 * (COUNT // 10)  # cold: every spec, once
    assert len(first.splitlines()) == COUNT + COUNT // 10  # one line per config
    assert "synth_0000/large  1.0.0  train 100   1000 B to download   (default config)\n" in first
    assert "\nsynth_0999        1.5.0  train 1099  2.0 KiB to download\n" in first
    assert run_list() == (0, first, "")
    code, out, _ = run_list("--tag", "tabular-regression", "synth_001")
    names = [line.split()[0] for line in out.splitlines()]
    assert names == ["synth_0010/small", "synth_0010/large", "synth_0012", "synth_0014",
                     "synth_0016", "synth_0018"]  # fmt: skip
    assert run_list("--json")[1].count('"num_downloads"') == COUNT
    assert loads == []  # warm: no spec loaded, whatever was asked


def test_the_warm_listing_imports_neither_yaml_nor_numpy(
    listing: tuple[Path, list[str]], tmp_path: Path
) -> None:
    root, _ = listing
    script = (
        "import sys; from pathlib import Path; import catalog.spec.registry as r\n"
        f"r.registry_file = lambda: Path({str(root / 'registry.yaml')!r})\n"
        "from catalog.cli import main; code = main(['list'])\n"
        "print(sorted({'yaml', 'numpy'} & set(sys.modules)), file=sys.stderr); sys.exit(code)"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip
    assert done.returncode == 0 and done.stderr == "[]\n", done.stderr
    assert len(done.stdout.splitlines()) == COUNT + COUNT // 10


def test_an_edited_builder_is_loaded_again_and_only_it(
    listing: tuple[Path, list[str]],
) -> None:
    root, loads = listing
    folder = root / "synth_0007"
    yaml_file, checksums = folder / "builder.yaml", folder / "checksums.tsv"
    with restored(yaml_file, checksums):
        # the same number of bytes (train 107 -> 108): only the mtime says it changed
        before = yaml_file.stat()
        write_builder(folder, 7, count=108)
        assert yaml_file.stat().st_size == before.st_size
        os.utime(yaml_file, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
        out = run_list()[1]
        assert loads == ["synth_0007"] and "\nsynth_0007        1.0.0  train 108   " in out
        # checksums.tsv counts too: a new size is a new download size
        checksums.write_text(
            f"https://example.org/synth_0007.zip\t{5 << 20}\t{7:064x}\tsynth_0007.zip\n"
        )
        loads.clear()
        out = run_list()[1]
        assert loads == ["synth_0007"] and "train 108   5.0 MiB to download" in out
        loads.clear()
        assert run_list()[1] == out and loads == []


def test_a_broken_builder_fails_every_listing_until_fixed(
    listing: tuple[Path, list[str]],
) -> None:
    root, loads = listing
    spec = root / "synth_0003" / "builder.yaml"
    with restored(spec):
        good = spec.read_text()
        spec.write_text(good.replace("version: 1.3.0", "version: three"))
        for _ in range(2):
            code, out, err = run_list()
            assert code == 1 and "synth_0003" not in out and len(out.splitlines()) == 1099
            assert err.startswith("catalog: error: synth_0003: ") and "version" in err
        assert loads == ["synth_0003", "synth_0003"]  # never kept: loaded each time
        spec.write_text(good + "\n")
        loads.clear()
        code, out, err = run_list()
        assert (code, err, loads) == (0, "", ["synth_0003"]) and "\nsynth_0003 " in out


@pytest.mark.parametrize(
    "damage", [b"{not json", b"[1, 2]", b'{"code": "another catalog"}', b"", b"\xff" * 10]
)
def test_a_damaged_index_is_read_as_none(damage: bytes, tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    path.write_bytes(damage)
    assert index._read_index(path, index._code_key()) == {
        "code": index._code_key(), "registry": None, "builders": {}
    }  # fmt: skip


def test_a_cut_index_is_rebuilt(
    listing: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, loads = listing
    first = run_list()
    path = index.index_file(root / "registry.yaml")
    assert path.is_file() and path.parent == tmp_path / "cache" / "catalog"
    with open(path, "r+b") as f:  # cut short, as by a full disk
        f.truncate(path.stat().st_size // 2)
    assert run_list() == first and len(loads) == COUNT + 2 * (COUNT // 10)
    loads.clear()
    assert run_list() == first and loads == []  # rebuilt whole


def test_an_unwritable_cache_dir_is_only_a_slower_listing(
    listing: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run_list()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert run_list() == first  # nothing could be written: listed all the same
    assert not list(tmp_path.glob("**/*.tmp"))


def test_a_new_registry_entry_and_another_catalog_are_noticed(
    listing: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, loads = listing
    reg = root / "registry.yaml"
    with restored(reg):
        write_builder(root / "synth_1001", 1001)
        reg.write_text(reg.read_text() + "  synth_1001: synth_1001\n")
        out = run_list()[1]
        assert loads == ["synth_1001"] and out.splitlines()[-1].startswith("synth_1001 ")
    path = index.index_file(reg)
    assert index._read_index(path, index._code_key())["builders"]
    monkeypatch.setattr(index, "__version__", "999.0.0")  # an upgrade: every summary again
    assert index._read_index(path, index._code_key())["builders"] == {}


def test_a_hand_edited_entry_is_made_again(listing: tuple[Path, list[str]]) -> None:
    root, loads = listing
    first = run_list()
    path = index.index_file(root / "registry.yaml")
    data = json.loads(path.read_text("utf-8"))
    folder = str(root / "synth_0005")
    data["builders"][folder]["summary"]["rows"][0][2] = "train 5"  # splits: not a list
    data["builders"][str(root / "synth_0006")]["summary"]["entry"]["tags"] = None
    path.write_text(json.dumps(data))
    assert run_list() == first and sorted(loads) == ["synth_0005", "synth_0006"]


def test_where_the_index_lives(
    listing: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, loads = listing
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # ignored, as XDG says
    assert index.cache_dir() == tmp_path / "home" / ".cache" / "catalog"

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(index, "cache_dir", no_home)
    code, out, err = run_list()  # no cache dir at all: every spec, every time
    assert code == 0 and len(out.splitlines()) == COUNT + COUNT // 10 and err == ""
    assert len(loads) == COUNT + 2 * (COUNT // 10)
