"""A builder spec cannot make catalog hang, exhaust memory, or read or write outside the
places it may name: YAML expansion and file size are bounded, a names_file is a regular file
of bounded size inside the builder folder, names match one pattern, and download URLs are
http(s) whose paths never decode to '..' (in specs, and when mapped onto a mirror dir)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from catalog.download.mirrors import sources
from catalog.errors import FeatureError, SpecError
from catalog.features.class_label import MAX_NAMES_FILE_SIZE, read_names_file
from catalog.spec.load import load_spec
from catalog.spec.yaml_file import MAX_SPEC_FILE_SIZE
from catalog.testing.http_server import LoopbackServer

from conftest import catalog_cli

ROOT = Path(__file__).resolve().parents[2]
GOOD = (ROOT / "builders" / "mnist" / "builder.yaml").read_text()
LABEL = "label: {type: ClassLabel, num_classes: 10}"

LAUGHS = "".join(
    f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" if i else "l0: &l0 [lol]\n"
    for i in range(10)
)  # 9**9 (387 million) "lol"s once expanded, in 1 KiB of YAML


def spec_with(folder: Path, old: str, new: str) -> Path:
    assert old in GOOD
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "builder.yaml").write_text(GOOD.replace(old, new, 1))
    return folder


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI without the CATALOG_* settings of the environment."""
    return catalog_cli(*args, env=dict.fromkeys(k for k in os.environ if k.startswith("CATALOG_")))


# YAML.


def test_billion_laughs_is_refused_quickly_by_the_cli(tmp_path: Path) -> None:
    folder = tmp_path / "laughs"
    folder.mkdir()
    (folder / "builder.yaml").write_text(LAUGHS + GOOD)
    result = cli("info", str(folder))  # before: hangs, then runs out of memory
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "expands to more than 100000 YAML nodes" in result.stderr
    assert str(folder / "builder.yaml") in result.stderr


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path: Path) -> None:
    folder = spec_with(tmp_path / "b", "tags: [image, image-classification]", "tags: &t [*t]")
    with pytest.raises(SpecError, match="expands to more than"):
        load_spec(folder)


def test_aliases_used_a_few_times_still_work() -> None:
    # cifar10 shares its split options through an anchor.
    assert "&options" in (ROOT / "builders" / "cifar10" / "builder.yaml").read_text()
    load_spec(ROOT / "builders" / "cifar10")


def test_a_huge_builder_yaml_is_refused(tmp_path: Path) -> None:
    folder = spec_with(tmp_path / "b", "description: >", "description: >\n" + "  x\n" * 400_000)
    assert (folder / "builder.yaml").stat().st_size > MAX_SPEC_FILE_SIZE
    with pytest.raises(SpecError, match="larger than 1.0 MiB"):
        load_spec(folder)


# names_file.


@pytest.mark.parametrize(
    ("names_file", "message"),
    [
        ("/dev/zero", "expected a path relative to the builder folder"),
        ("/etc/passwd", "expected a path relative to the builder folder"),
        ("../names.txt", "expected a path relative to the builder folder"),
        ("sub/../../names.txt", "expected a path relative to the builder folder"),
        ("out.txt", "leads outside the builder folder"),  # a symlink to ../names.txt
        ("zero", "leads outside the builder folder"),  # a symlink to /dev/zero
        ("fifo", "is not a regular file"),
        ("big.txt", "more than the 16.0 MiB a names file may"),
        ("missing.txt", "cannot read"),
    ],
)
def test_names_file_must_be_a_small_regular_file_inside_the_folder(
    tmp_path: Path, names_file: str, message: str
) -> None:
    (tmp_path / "names.txt").write_text("\n".join("abcdefghij") + "\n")
    folder = spec_with(
        tmp_path / "b", LABEL, f"label: {{type: ClassLabel, names_file: {names_file}}}"
    )
    (folder / "out.txt").symlink_to(tmp_path / "names.txt")
    (folder / "zero").symlink_to("/dev/zero")
    os.mkfifo(folder / "fifo")
    with open(folder / "big.txt", "wb") as f:
        f.truncate(MAX_NAMES_FILE_SIZE + 1)
    with pytest.raises(SpecError, match=message) as info:
        load_spec(folder)
    assert "field 'features'" in str(info.value) and "names_file" in str(info.value)


def test_names_file_inside_the_folder_works(tmp_path: Path) -> None:
    folder = spec_with(tmp_path / "b", LABEL, "label: {type: ClassLabel, names_file: sub/n.txt}")
    (folder / "sub").mkdir()
    (folder / "sub" / "n.txt").write_text("\n".join("abcdefghij") + "\n")
    assert load_spec(folder).features["label"].names == list("abcdefghij")  # type: ignore[attr-defined]


def test_read_names_file_refuses_devices() -> None:
    with pytest.raises(FeatureError, match="'/dev/zero': not a regular file"):
        read_names_file("/dev/zero")


# Names.


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("  label: {", "  _label: {", "feature name '_label' must be words of letters"),
        ("  label: {", "  my--label: {", "feature name 'my--label' must be"),
        ("  label: {", "  'label//x': {", "feature name 'label//x' must be"),
        ("  label: {", "  'label ': {", "feature name 'label ' must be"),
        ("  label: {", "  2017: {", "feature name 2017 must be"),
        (
            "  label: {type: ClassLabel, num_classes: 10}",
            "  label: {type: ClassLabel, num_classes: 10}\n  meta: {Bad  Name: {type: Text}}",
            "feature name 'meta/Bad  Name' must be",
        ),
    ],
)
def test_feature_names_are_validated_when_the_spec_loads(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    folder = spec_with(tmp_path / "b", old, new)
    with pytest.raises(SpecError, match=message.replace("[", r"\[")) as info:
        load_spec(folder)
    assert "field 'features'" in str(info.value)


def test_config_names_are_validated_when_the_spec_loads(tmp_path: Path) -> None:
    text = (ROOT / "builders" / "cmaterdb" / "builder.yaml").read_text()
    assert "\n  bangla:" in text
    (tmp_path / "builder.yaml").write_text(text.replace("\n  bangla:", "\n  2017:", 1))
    with pytest.raises(SpecError, match="a config name must be words of"):
        load_spec(tmp_path)


# URLs.


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "FILE:///etc/passwd",
        "/etc/passwd",
        "ftp://example.org/data.gz",
        "https:///no-host.gz",
        "https://example.org/a/%2F..%2F..%2Fetc/passwd",
        "https://example.org/a/%2e%2e/%2E%2E/etc/passwd",
        "https://example.org/a/..%5C..%5Cetc/passwd",
        "https://example.org/a/./b.gz",
    ],
)
def test_unsafe_download_urls_are_refused(tmp_path: Path, url: str) -> None:
    folder = spec_with(
        tmp_path / "b",
        "url: https://storage.googleapis.com/cvdf-datasets/mnist/train-images-idx3-ubyte.gz",
        f"url: '{url}'",
    )
    with pytest.raises(SpecError, match="field 'downloads.train_images.url'"):
        load_spec(folder)
    mirrored = spec_with(
        tmp_path / "m",
        "mirrors: [https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz]",
        f"mirrors: ['{url}']",
    )
    with pytest.raises(SpecError, match="field 'downloads.train_images.mirrors'"):
        load_spec(mirrored)


def test_register_checksums_never_copies_a_local_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("private\n")
    folder = spec_with(
        tmp_path / "b",
        "url: https://storage.googleapis.com/cvdf-datasets/mnist/train-images-idx3-ubyte.gz",
        f"url: {secret.as_uri()}",
    )
    data = tmp_path / "data"
    result = cli("prepare", str(folder), "--register-checksums", "--data-dir", str(data))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "expected an http:// or https:// URL" in result.stderr
    copied = [p for p in data.rglob("*") if p.is_file()] if data.exists() else []
    assert not any(p.read_bytes() == b"private\n" for p in copied)
    assert not (folder / "checksums.tsv").exists()


def test_encoded_dot_dot_never_leaves_a_mirror_dir(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "example.org").mkdir(parents=True)
    (tmp_path / "secret.gz").write_bytes(b"private")
    for url in (
        "http://example.org/a/%2F..%2F..%2F..%2Fsecret.gz",
        "http://example.org/%2e%2e/%2e%2e/secret.gz",
        "http://example.org/x/..%2F..%2F..%2Fsecret.gz",
    ):
        found = sources([url], [str(mirror)])
        assert [s for s in found if s.local] == [], url
        assert [s.where for s in found] == [url]  # only the URL itself remains


def test_max_extracted_size_is_read_from_the_spec(tmp_path: Path, server: LoopbackServer) -> None:
    old = "    mirrors: [https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz]"
    folder = spec_with(tmp_path / "b", old, f"{old}\n    max_extracted_size: 2GiB")
    assert load_spec(folder).downloads["train_images"].max_extracted_size == 2 << 30
    bad = spec_with(tmp_path / "c", old, f"{old}\n    max_extracted_size: lots")
    with pytest.raises(SpecError, match="'downloads.train_images.max_extracted_size'"):
        load_spec(bad)


def test_a_manual_download_is_marked_in_the_spec_and_its_info(tmp_path: Path) -> None:
    from catalog.spec.declared import declared_info

    old = "    mirrors: [https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz]"
    folder = spec_with(tmp_path / "b", old, f"{old}\n    manual: true")
    shutil.copy(ROOT / "builders" / "mnist" / "checksums.tsv", folder)  # the registered sizes
    spec = load_spec(folder)
    assert spec.downloads["train_images"].by_hand and not spec.downloads["train_images"].manual
    assert not spec.downloads["train_labels"].by_hand
    info = declared_info(spec)
    assert info.downloads["train_images"]["manual"] is True
    assert "manual" not in info.downloads["train_labels"]  # the others' info stays as it was
    assert info.manual_download_size == spec.downloads["train_images"].size > 0
    assert "to download by hand into the manual dir" in str(info)
    bad = spec_with(tmp_path / "c", old, f"{old}\n    manual: sometimes")
    with pytest.raises(SpecError, match="'downloads.train_images.manual'"):
        load_spec(bad)
