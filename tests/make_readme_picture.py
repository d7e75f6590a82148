"""Make docs/fashion_mnist_show.png, the README's picture (run from the repository root).

    python tests/make_readme_picture.py

It is `catalog show` of the 50 real Fashion-MNIST test images in tests/data/: the real
fashion_mnist builder with only its test files, their checksums and 50 examples, prepared
with `catalog prepare --offline` from a local mirror directory (the `wget -x` layout), then
drawn with `catalog show`. No network is used. tests/cli/test_cli_show.py checks that the images
in the committed picture are still what `catalog show` draws.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import yaml

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "data" / "fashion_mnist_first50"
PICTURE = ROOT / "docs" / "fashion_mnist_show.png"
#: The `catalog show` arguments the picture is made with.
SHOW_ARGS = ("--split", "test", "-n", "32", "--columns", "8")


def sample_builder(root: Path) -> tuple[Path, Path]:
    """(builder folder, mirror dir): fashion_mnist cut down to the 50-image sample."""
    spec = yaml.safe_load((ROOT / "builders" / "fashion_mnist" / "builder.yaml").read_text())
    spec["splits"] = {"test": {**spec["splits"]["test"], "num_examples": 50}}
    keep = set(spec["splits"]["test"]["files"].values())
    spec["downloads"] = {k: v for k, v in spec["downloads"].items() if k in keep}
    folder, mirror = root / "fashion_mnist", root / "mirror"
    folder.mkdir(parents=True)
    (folder / "builder.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    lines = []
    for download in spec["downloads"].values():
        url = urlparse(download["url"])
        filename = url.path.rsplit("/", 1)[1]
        data = (SAMPLE / filename).read_bytes()
        lines.append(
            f"{download['url']}\t{len(data)}\t{hashlib.sha256(data).hexdigest()}\t{filename}"
        )
        target = mirror / url.netloc / url.path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (folder / "checksums.tsv").write_text("\n".join(lines) + "\n")
    return folder, mirror


def catalog(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "catalog", *args], check=True)


def main(output: Path = PICTURE) -> None:
    work = Path(tempfile.mkdtemp())
    try:
        folder, mirror = sample_builder(work)
        data = str(work / "data")
        catalog("prepare", str(folder), "--offline", "--mirror", str(mirror), "--data-dir", data)
        output.parent.mkdir(parents=True, exist_ok=True)
        catalog("show", str(folder), *SHOW_ARGS, "--data-dir", data, "-o", str(output))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
