"""Prepare-time downscaling (``--image-max-side N``): images stored at most N pixels on their
longer side, re-encoded as the reference downscale does, recorded in dataset_info.json and in
a folder of their own, never taken for the full-size copy (nor it for them), under every
runner."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import textwrap
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

import catalog
from catalog.download import resolve_config
from catalog.errors import FeatureError, NotPreparedError, SpecError
from catalog.features import Image
from catalog.features.image import DOWNSCALE_QUALITY, fit_side
from catalog.info.dataset_info import DatasetInfo
from catalog.prepare.driver import prepare_dataset
from catalog.prepare.options import PrepareOptions
from catalog.prepare.reuse import foreign_to
from catalog.spec.load import load_spec
from catalog.testing.http_server import LoopbackServer

from conftest import catalog_cli

#: (height, width, mode) of the photos: larger than 64 on either side, one already small
#: enough (kept byte for byte), a grayscale one (converted to RGB before resizing).
PHOTOS = [(120, 90, "RGB"), (50, 40, "RGB"), (90, 200, "RGB"), (64, 30, "RGB"), (150, 150, "L")]
MAX = 64


def photo(height: int, width: int, mode: str, seed: int) -> bytes:
    """A photo-like JPEG: smooth waves and some noise."""
    rng = np.random.default_rng(seed)
    r, c = np.ogrid[:height, :width]
    channels = 3 if mode == "RGB" else 1
    waves = [127 + 90 * np.sin(r / (9 + 4 * k) + c / (13 + 3 * k)) for k in range(channels)]
    pixels = np.stack(waves, axis=-1) + rng.normal(0, 10, (height, width, channels))
    pixels = pixels.clip(0, 255).astype(np.uint8)
    out = io.BytesIO()
    PILImage.fromarray(pixels[:, :, 0] if mode == "L" else pixels).save(out, "JPEG", quality=92)
    return out.getvalue()


def photo_builder(root: Path, server: LoopbackServer, extra_yaml: str = "") -> Path:
    """A tf_flowers-like builder (a tar.gz of a folder per class) served over loopback."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        for i, (h, w, mode) in enumerate(PHOTOS):
            data = photo(h, w, mode, i)
            info = tarfile.TarInfo(f"photos/{'ab'[i % 2]}/{i}.jpg")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    data = archive.getvalue()
    url = server.add("/photos.tgz", data)
    folder = root / "photos"
    folder.mkdir(parents=True)
    (folder / "builder.yaml").write_text(
        textwrap.dedent(f"""\
        name: photos
        version: 1.0.0
        features:
          image: {{type: Image, shape: [null, null, 3], encoding: jpeg}}
          label: {{type: ClassLabel, names: [a, b]}}
        downloads:
          photos: {{url: {url}}}
        splits:
          train:
            format: image_folder
            files: {{root: {{download: photos, member: photos}}}}
            num_examples: {len(PHOTOS)}
        """)
        + extra_yaml
    )
    digest = hashlib.sha256(data).hexdigest()
    (folder / "checksums.tsv").write_text(f"{url}\t{len(data)}\t{digest}\tphotos.tgz\n")
    return folder


def sources() -> dict[str, bytes]:
    return {f"{i}.jpg": photo(h, w, m, i) for i, (h, w, m) in enumerate(PHOTOS)}


def reference(data: bytes, max_side: int) -> tuple[bytes, np.ndarray]:
    """The documented downscale, written out: full-size decode, RGB, LANCZOS to the fitted
    size, JPEG at DOWNSCALE_QUALITY; its bytes and its (undecoded-again) pixels."""
    with PILImage.open(io.BytesIO(data)) as img:
        rgb = img.convert("RGB")
    height, width = fit_side(rgb.height, rgb.width, max_side)
    small = rgb.resize((width, height), PILImage.Resampling.LANCZOS)
    out = io.BytesIO()
    small.save(out, "JPEG", quality=DOWNSCALE_QUALITY)
    return out.getvalue(), np.asarray(small)


def test_prepared_pixels_are_the_reference_downscale(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = photo_builder(tmp_path, server)
    b = catalog.builder(folder, data_dir=tmp_path / "data", image_max_side=MAX)
    b.download_and_prepare()
    raw = b.as_data_source("train", decoders={"image": False})
    pixels = b.as_data_source("train")
    originals = sources()
    by_size = {(h, w): photo(h, w, m, i) for i, (h, w, m) in enumerate(PHOTOS)}
    seen = set()
    for i in range(len(raw)):
        data = raw[i]["image"]
        with PILImage.open(io.BytesIO(data)) as img:
            size = img.size
        image = pixels[i]["image"]
        assert max(image.shape[:2]) <= MAX and image.shape[2] == 3
        # which source: the one whose fitted size this is (all fitted sizes differ)
        (source,) = [
            d for (h, w), d in by_size.items() if fit_side(h, w, MAX) == (size[1], size[0])
        ]
        if data == source:  # small enough already: kept byte for byte, never re-encoded
            assert max(size) <= MAX
        else:
            want_bytes, want_pixels = reference(source, MAX)
            assert data == want_bytes  # the same bytes as the reference downscale
            mse = np.mean((image.astype(float) - want_pixels) ** 2)
            assert 10 * np.log10(255**2 / mse) > 32  # dB: JPEG at quality 90, noisy photos
        seen.add(source)
    assert seen == set(originals.values())


def test_the_setting_is_recorded_and_info_shows_it(tmp_path: Path, server: LoopbackServer) -> None:
    folder = photo_builder(tmp_path, server)
    data = tmp_path / "data"
    result = catalog_cli(
        "prepare", str(folder), "--data-dir", str(data), "--image-max-side=64", "--json"
    )
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)["datasets"][0]
    assert entry["image_max_side"] == 64
    assert entry["path"] == str(data / "photos" / "1.0.0-max64")
    saved = json.loads((data / "photos" / "1.0.0-max64" / "dataset_info.json").read_text())
    image = saved["features"]["features"]["image"]
    assert (image["max_side"], image["quality"]) == (64, DOWNSCALE_QUALITY)
    shown = catalog_cli("info", str(folder), "--data-dir", str(data), "--image-max-side", "64")
    assert shown.returncode == 0, shown.stderr
    assert f"downscaled to at most 64 px (JPEG quality {DOWNSCALE_QUALITY})" in shown.stdout
    assert "1.0.0-max64" in shown.stdout
    # the full-size copy is not prepared: info of it says so, and never shows the other
    full = catalog_cli("info", str(folder), "--data-dir", str(data), "--json")
    assert json.loads(full.stdout)["prepared"] is False
    assert "max_side" not in json.loads(full.stdout)["features"]["features"]["image"]
    # the copy opened by path shows it too
    by_path = catalog_cli("info", str(data / "photos" / "1.0.0-max64"))
    assert "downscaled to at most 64 px" in by_path.stdout, by_path.stderr
    # rm removes the copy of the size named, and only that one
    catalog.builder(folder, data_dir=data).download_and_prepare()
    removed = catalog_cli("rm", str(folder), "--data-dir", str(data), "--image-max-side", "64")
    assert removed.returncode == 0, removed.stderr
    assert not (data / "photos" / "1.0.0-max64").exists()
    assert catalog.builder(folder, data_dir=data).is_prepared


def test_another_setting_is_never_taken_for_this_one(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = photo_builder(tmp_path, server)
    data = tmp_path / "data"
    small = catalog.builder(folder, data_dir=data).prepare(PrepareOptions(image_max_side=MAX))
    assert small.status == "prepared"
    # only the downscaled copy exists: the full-size one is not served from it
    with pytest.raises(NotPreparedError, match=r"another size \(at most 64 px\).*image_max_side"):
        catalog.data_source(folder, split="train", data_dir=data, download=False)
    full = catalog.data_source(folder, split="train", data_dir=data)  # prepares full size
    assert sorted(max(e["image"].shape[:2]) for e in full) == sorted(max(p[:2]) for p in PHOTOS)
    small_ds = catalog.data_source(folder, split="train", data_dir=data, image_max_side=MAX)
    assert max(max(e["image"].shape[:2]) for e in small_ds) == MAX
    # both stay; each prepare reuses its own, another size is a third folder
    again = catalog.builder(folder, data_dir=data).prepare(PrepareOptions(image_max_side=MAX))
    assert again.status == "reused"
    assert catalog.builder(folder, data_dir=data).prepare().status == "reused"
    other = catalog.builder(folder, data_dir=data).prepare(PrepareOptions(image_max_side=32))
    assert other.status == "prepared"
    names = sorted(p.name for p in (data / "photos").iterdir() if not p.name.startswith("."))
    assert [n for n in names if ".gen-" not in n] == ["1.0.0", "1.0.0-max32", "1.0.0-max64"]
    # a downscaled copy put where the full-size one belongs is refused, by its metadata
    b = catalog.builder(folder, data_dir=data)
    info64 = DatasetInfo.read((data / "photos" / "1.0.0-max64").resolve())
    assert foreign_to(info64, b.spec, b.data_path) == (
        f"{b.data_path} holds photos 1.0.0 with images at most 64 px on a side, not at full "
        "size as asked"
    )
    # the driver refuses a size its target folder was not named for
    config = resolve_config(None, data_dir=data)
    with pytest.raises(ValueError, match="image_max_side=32 into the folder of"):
        prepare_dataset(b.spec, b.store, b.data_path, config, PrepareOptions(image_max_side=32))
    info_full = DatasetInfo.read(b.data_path.resolve())
    assert "at full size, not at most 64 px" in str(
        foreign_to(info_full, b.with_image_max_side(MAX).spec, b.data_path)
    )


@pytest.mark.parametrize("runner", ["num_proc", "beam"])
def test_every_runner_writes_the_same_downscaled_bytes(
    tmp_path: Path, server: LoopbackServer, runner: str
) -> None:
    if runner == "beam":
        pytest.importorskip("apache_beam")
    folder = photo_builder(tmp_path, server)
    serial = catalog.builder(folder, data_dir=tmp_path / "serial", image_max_side=MAX)
    serial.download_and_prepare(shard_size=2000)
    options = (
        PrepareOptions(num_proc=2, shard_bytes=2000, image_max_side=MAX)
        if runner == "num_proc"
        else PrepareOptions(
            beam_pipeline_options="runner=DirectRunner,direct_num_workers=2",
            shard_bytes=2000,
            image_max_side=MAX,
        )
    )
    done = catalog.builder(folder, data_dir=tmp_path / runner).prepare(options)
    assert done.status == "prepared" and done.units_written > 1

    def shards(path: Path) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(path.glob("*.array_record-*"))}

    other = catalog.builder(folder, data_dir=tmp_path / runner, image_max_side=MAX)
    assert shards(other.data_path) == shards(serial.data_path) != {}


def test_the_builder_spec_field(tmp_path: Path, server: LoopbackServer) -> None:
    """builder.yaml gives it on the image feature: ``{type: Image, max_side: 64}``."""
    folder = photo_builder(tmp_path, server)
    yaml = folder / "builder.yaml"
    declared = "{type: Image, shape: [null, null, 3], encoding: jpeg"
    yaml.write_text(yaml.read_text().replace(declared, declared + ", max_side: 64"))
    spec = load_spec(folder)
    assert spec.image_max_side == 64 and spec.version_dir == "1.0.0-max64"
    assert spec.features["image"] == Image((None, None, 3), encoding="jpeg", max_side=64)
    assert spec.with_image_max_side(None).image_max_side is None
    assert spec.fingerprint != spec.with_image_max_side(None).fingerprint
    b = catalog.builder(folder, data_dir=tmp_path / "data")
    assert b.data_path.name == "1.0.0-max64"
    b.download_and_prepare()
    assert max(max(e["image"].shape[:2]) for e in b.as_data_source("train")) == 64
    # and a quality of its own, recorded
    yaml.write_text(yaml.read_text().replace("max_side: 64", "max_side: 64, quality: 70"))
    assert load_spec(folder).features["image"].to_json()["quality"] == 70
    for bad in ("0", "-3", "big", "true"):
        yaml.write_text(yaml.read_text().replace("max_side: 64", f"max_side: {bad}"))
        with pytest.raises(SpecError, match="max_side must be a positive int"):
            load_spec(folder)
        yaml.write_text(yaml.read_text().replace(f"max_side: {bad}", "max_side: 64"))


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_a_bad_value_is_one_clear_error(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match=f"image_max_side must be >= 1 \\(pixels\\), got {bad}"):
        PrepareOptions(image_max_side=bad)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="image_max_side must be a positive int"):
        catalog.builder("tf_flowers", data_dir=tmp_path, image_max_side=bad)  # type: ignore[arg-type]
    for value in ("0", "-5"):
        result = catalog_cli(
            "prepare", "tf_flowers", f"--data-dir={tmp_path}", f"--image-max-side={value}"
        )
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [
            f"catalog: error: argument --image-max-side: expected a positive integer, got "
            f"'{value}' (see 'catalog prepare --help')"
        ]
    # a dataset without images: one line naming it
    result = catalog_cli("prepare", "iris", "--data-dir", str(tmp_path), "--image-max-side", "64")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "catalog: error: iris has no image feature: image_max_side (64) applies to image "
        "features only"
    ]
    assert not any(tmp_path.iterdir())  # nothing written


def test_the_image_feature_downscales_arrays_and_keeps_raw_shapes() -> None:
    rng = np.random.default_rng(0)
    big = rng.integers(0, 256, (100, 50, 3), dtype=np.uint8)
    raw = Image((100, 50, 3), encoding="raw", max_side=40)
    assert raw.shape == (40, 20, 3) and raw.source_shape == (100, 50, 3)
    want = np.asarray(PILImage.fromarray(big).resize((20, 40), PILImage.Resampling.LANCZOS))
    assert raw.encode(big) == want.tobytes()
    assert raw.fixed_size == 40 * 20 * 3
    again = Image.from_json(raw.to_json())
    assert again == raw and again.source_shape == (100, 50, 3)
    with pytest.raises(FeatureError, match=r"expected shape \(100, 50, 3\), got \(40, 20, 3\)"):
        raw.encode(want)
    # RGBA keeps its alpha: PNG, lossless at the new size
    rgba = Image((None, None, 4), max_side=30)
    stored_rgba = rgba.encode(rng.integers(0, 256, (60, 45, 4), dtype=np.uint8))
    assert stored_rgba.startswith(b"\x89PNG")
    with PILImage.open(io.BytesIO(stored_rgba)) as img:
        assert img.size == (22, 30) and img.mode == "RGBA"
    # one side varying: the other shrinks with it, so neither is known once stored
    assert Image((None, 500, 3), max_side=256).shape == (None, None, 3)
    assert Image((None, 500, 3), max_side=256).source_shape == (None, 500, 3)
    for bad in ({"max_side": 0}, {"max_side": 8, "quality": 0}, {"quality": 80}):
        with pytest.raises(FeatureError):
            Image((None, None, 3), **bad)  # type: ignore[arg-type]
        # full size: the JSON (and so every fingerprint and dataset_info.json) is as before
    assert "max_side" not in Image((None, None, 3)).to_json()
    assert Image((None, None, 3), max_side=8).describe() == (
        f"png, downscaled to at most 8 px (JPEG quality {DOWNSCALE_QUALITY})"
    )
