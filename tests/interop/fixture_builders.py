"""Builder folders for the Parquet and Croissant tests: photos of mixed sizes and formats in
class folders (a zip served by a loopback server), and a table of typed columns (a CSV)."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np
from PIL import Image as PILImage

from catalog.testing.http_server import LoopbackServer

CLASSES = ["cat", "dog"]


def photo(seed: int, size: tuple[int, int], kind: str, mode: str = "RGB") -> bytes:
    """A PNG or JPEG file of random pixels."""
    rng = np.random.default_rng(seed)
    channels = {"RGB": 3, "L": 1}[mode]
    pixels = rng.integers(0, 256, (size[1], size[0], channels), dtype=np.uint8)
    img = PILImage.fromarray(pixels[..., 0] if channels == 1 else pixels, mode)
    buffer = io.BytesIO()
    img.save(buffer, format=kind)
    return buffer.getvalue()


def photo_files() -> dict[str, bytes]:
    """``<class>/<file>`` -> bytes: PNG and JPEG, mixed sizes, one grayscale PNG."""
    return {
        "cat/a.png": photo(1, (20, 12), "PNG"),
        "cat/b.jpg": photo(2, (16, 16), "JPEG"),
        "cat/c.png": photo(3, (9, 30), "PNG", "L"),
        "dog/d.jpg": photo(4, (31, 7), "JPEG"),
        "dog/e.png": photo(5, (8, 8), "PNG"),
    }


def zip_of(files: dict[str, bytes], prefix: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, data in sorted(files.items()):
            z.writestr(prefix + name, data)
    return buffer.getvalue()


def _checksums(folder: Path, url: str, data: bytes, filename: str) -> None:
    digest = hashlib.sha256(data).hexdigest()
    (folder / "checksums.tsv").write_text(f"{url}\t{len(data)}\t{digest}\t{filename}\n")


def photos_builder(root: Path, server: LoopbackServer, name: str = "photos") -> Path:
    """An image_folder builder: the photos of `photo_files` in one zip, one split."""
    data = zip_of(photo_files(), "photos/")
    url = server.add(f"/{name}.zip", data)
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "builder.yaml").write_text(
        f"name: {name}\nversion: 1.2.0\ndescription: Cats & dogs </script> of all sizes.\n"
        "license: CC-BY-4.0\ncitation: '@misc{photos, title={Photos}}'\n"
        "homepage: https://example.org/photos\ntags: [image, image-classification]\n"
        "features:\n  image: {type: Image, shape: [null, null, 3]}\n"
        f"  label: {{type: ClassLabel, names: [{', '.join(CLASSES)}]}}\n"
        "supervised_keys: [image, label]\n"
        f"downloads:\n  photos: {{url: {url}}}\n"
        "splits:\n  train:\n    format: image_folder\n"
        "    files: {root: {download: photos, member: photos}}\n"
        "    options: {reencode_invalid: true}\n"
        "    num_examples: 5\n"
    )
    _checksums(folder, url, data, f"{name}.zip")
    return folder


TABLE = (
    "name,age,height,member,kind\n"
    "Ada,36,1.65,true,human\n"
    "Bob,41,1.8,false,robot\n"
    'Cy "the third",7,0.95,true,human\n'
    "Dee,,1.5,false,robot\n"
)


def table_builder(root: Path, server: LoopbackServer, name: str = "people") -> Path:
    """A delimited builder: text, int, float, bool (as int8) and a ClassLabel column; one
    split per file (train: the rows with an age, test: the other)."""
    lines = TABLE.splitlines(keepends=True)
    files = {"train.csv": "".join(lines[:4]), "test.csv": lines[0] + lines[4].replace(",,", ",0,")}
    folder = root / name
    folder.mkdir(parents=True)
    downloads, sums = [], []
    for filename, text in files.items():
        data = text.encode()
        url = server.add(f"/{name}/{filename}", data)
        downloads.append(f"  {filename[:-4]}: {{url: {url}}}\n")
        sums.append(f"{url}\t{len(data)}\t{hashlib.sha256(data).hexdigest()}\t{filename}\n")
    splits = "".join(
        f"  {split}:\n    format: delimited\n    files: {{file: {split}}}\n"
        "    options:\n      columns: {name: name, age: age, height: height, kind: kind}\n"
        f"    num_examples: {count}\n"
        for split, count in (("train", 3), ("test", 1))
    )
    (folder / "builder.yaml").write_text(
        f"name: {name}\nversion: 0.1.0\ndescription: People.\n"
        "features:\n  name: {type: Text}\n  age: {type: Scalar, dtype: int32}\n"
        "  height: {type: Scalar, dtype: float64}\n"
        "  kind: {type: ClassLabel, names: [human, robot]}\n"
        "downloads:\n" + "".join(downloads) + "splits:\n" + splits
    )
    (folder / "checksums.tsv").write_text("".join(sums))
    return folder
