"""The wheel carries registry.yaml and the builder folders: an install outside the checkout
still finds every dataset."""

from __future__ import annotations

import subprocess
import sysconfig
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_installed_wheel_lists_datasets_from_another_directory(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # Dependencies (and hatchling, the build backend) come from the interpreter running the
    # tests, whether that is a virtual environment or not: its site-packages directories are
    # put on the new environment's path with a .pth file, so nothing is fetched. (A venv made
    # with system_site_packages=True would see the base interpreter's, not this one's.)
    inner = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(inner, "outer-site-packages.pth").write_text("\n".join(sorted(outer)) + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", str(ROOT)],
        check=True, capture_output=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [str(python), "-c", "import catalog; print(catalog.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=elsewhere,
    ).stdout.strip()
    assert where.startswith(str(env_dir)), where  # the installed copy, not the checkout
    result = subprocess.run(
        [str(env_dir / "bin" / "catalog"), "list"], capture_output=True, text=True, cwd=elsewhere
    )
    assert result.returncode == 0, result.stderr
    assert "fashion_mnist" in result.stdout and "mnist" in result.stdout
    installed = Path(where).parent
    assert (installed / "registry.yaml").is_file()
    assert (installed / "builders" / "fashion_mnist" / "checksums.tsv").is_file()
    for static in ("site.js", "style.css"):  # catalog site's package data
        assert (installed / "present" / "site" / "static" / static).is_file()
