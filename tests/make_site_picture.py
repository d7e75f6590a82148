"""Make docs/site_fashion_mnist.png, the README's picture of `catalog site` (run from the
repository root; needs Debian's chromium).

    python tests/make_site_picture.py

The 50 real Fashion-MNIST test images in tests/data/ are prepared offline as fashion_mnist
(tests/make_readme_picture.py's sample builder, from a local mirror dir) into a fresh data dir;
`catalog site` then writes the site of the whole catalog with that data dir, and headless
Chromium (tests/chromium.py) takes a screenshot of fashion_mnist's page from disk.
No network is used. tests/present/test_site.py checks that the committed picture still shows the
example grid `catalog site` draws.
"""

from __future__ import annotations

import io
import shutil
import tempfile
from pathlib import Path

from PIL import Image as PILImage

from make_readme_picture import ROOT, catalog, sample_builder

PICTURE = ROOT / "docs" / "site_fashion_mnist.png"
#: The browser window (CSS pixels, one device pixel each) and the height kept of the page.
WIDTH, HEIGHT = 1000, 980


def make_site(work: Path) -> Path:
    """The site of the whole catalog with the 50-image fashion_mnist prepared; its folder."""
    from catalog.spec.registry import list_datasets

    folder, mirror = sample_builder(work)
    data = str(work / "data")
    catalog("prepare", str(folder), "--offline", "--mirror", str(mirror), "--data-dir", data, "-q")
    out = work / "site"
    catalog("site", "-o", str(out), *list_datasets(), "--data-dir", data)
    return out


def main(output: Path = PICTURE) -> None:
    from chromium import Chromium

    work = Path(tempfile.mkdtemp())
    try:
        site = make_site(work)
        with Chromium.start(work / "profile", width=WIDTH, height=HEIGHT) as browser:
            browser.navigate((site / "datasets" / "fashion_mnist.html").as_uri())
            if browser.errors:
                raise SystemExit(f"the page has errors: {browser.errors}")
            shot = browser.screenshot(full_page=False)
        output.parent.mkdir(parents=True, exist_ok=True)
        with PILImage.open(io.BytesIO(shot)) as image:
            image.convert("RGB").save(output, format="PNG", optimize=True)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
