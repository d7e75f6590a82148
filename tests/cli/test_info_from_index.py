"""`catalog info NAME` of a registered dataset not prepared is read from the registry's index
(`catalog.spec.index.page`, `catalog.cli.info.declared_text`): the text the loaded spec gives,
byte for byte, without importing NumPy or the readers."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from catalog.cli import info
from catalog.spec import load, registry

#: Runs ``catalog info ARGS`` and prints which heavy modules it imported.
PROBE = textwrap.dedent("""\
    import runpy, sys
    sys.argv = ["catalog", "info", *sys.argv[1:]]
    try:
        runpy.run_module("catalog", run_name="__main__")
    except SystemExit:
        pass
    heavy = {"numpy", "array_record", "PIL", "cv2", "pyarrow", "requests", "yaml"}
    print(sorted(heavy & {m.partition(".")[0] for m in sys.modules}), file=sys.stderr)
""")


def probe(*args: str, data: Path) -> tuple[str, str]:
    env = {**os.environ, "CATALOG_DATA_DIR": str(data)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60, env=env
    )
    return done.stdout, done.stderr


def full_text(name: str, data: Path) -> str:
    """`catalog info NAME` from the loaded spec (the path every other dataset takes)."""
    args = argparse.Namespace(name=name, data_dir=str(data), image_max_side=None, json=False)
    return info._full(args)


@pytest.mark.parametrize("name", ["mnist", "voc", "cmaterdb/telugu"])
def test_info_of_a_registered_dataset_imports_no_numpy(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    data = tmp_path / "data"
    cold = probe(name, data=data)  # loads the spec once, writes the index
    warm = probe(name, data=data)
    assert warm == (cold[0], "[]\n"), warm[1]
    assert warm[0] == full_text(name, data)
    assert f"no (would be at {data}/{name.partition('/')[0]}/" in warm[0]


def test_the_index_text_is_the_full_text_for_every_registered_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    data = tmp_path / "data"
    names = []
    for name, folder in registry.registered().items():
        names += [name, *(f"{name}/{c}" for c in load.load_spec(folder).configs)]
    assert len(names) > 60
    for name in names:
        fast = info.declared_text(name, str(data))
        assert fast is not None, name
        assert fast == full_text(name, data), name
    # read back from the index now written: still the same text
    assert info.declared_text("cmaterdb/telugu", str(data)) == full_text("cmaterdb/telugu", data)


def test_a_changed_builder_yaml_is_shown_as_it_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builders = tmp_path / "builders"
    shutil.copytree(registry.registered()["mnist"], builders / "digits")
    (builders / "registry.yaml").write_text("datasets:\n  digits: digits\n")
    spec = builders / "digits" / "builder.yaml"
    spec.write_text(spec.read_text().replace("name: mnist", "name: digits", 1))
    monkeypatch.setattr(registry, "registry_file", lambda: builders / "registry.yaml")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    data = tmp_path / "data"
    first = info.declared_text("digits", str(data))
    assert first is not None and first.startswith("digits 3.0.1\n")
    spec.write_text(spec.read_text().replace("handwritten digits", "hand-written numerals"))
    second = info.declared_text("digits", str(data))
    assert second is not None and "hand-written numerals" in second
    assert second == full_text("digits", data)


def test_what_the_index_does_not_answer_takes_the_full_path(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert info.declared_text("mnist:2.0.0", str(data)) is None  # the full path says why
    assert info.declared_text("mnist/nope", str(data)) is None
    assert info.declared_text("mnist:3.*", str(data)) is not None  # by resolve()
    assert info.declared_text("nope/mnist", str(data)) is None
    assert info.declared_text("no_such_dataset", str(data)) is None
    assert info.declared_text("mnist", "s3://bucket/data") is None
    (data / "mnist" / "3.0.1").mkdir(parents=True)  # something there: prepared or not
    assert info.declared_text("mnist", str(data)) is None
    (tmp_path / "file").write_text("")
    assert info.declared_text("mnist", str(tmp_path / "file" / "data")) is None
