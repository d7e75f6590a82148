"""The public surface: what `import catalog` exports, and what it must never import."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import catalog


def test_all_is_sorted_and_complete() -> None:
    assert catalog.__all__ == sorted(catalog.__all__)
    for name in catalog.__all__:
        assert hasattr(catalog, name), name
    public = {
        n
        for n in vars(catalog)
        if not n.startswith("_") and not isinstance(getattr(catalog, n), type(catalog))
    }
    assert public <= set(catalog.__all__), public - set(catalog.__all__)


def test_errors_are_rooted_in_builtins() -> None:
    assert issubclass(catalog.DatasetNotFoundError, KeyError)
    assert issubclass(catalog.ChecksumError, ValueError)
    assert issubclass(catalog.DownloadError, OSError)
    assert str(catalog.DatasetNotFoundError("no dataset named 'x'")) == "no dataset named 'x'"


def test_prepare_and_read_never_import_tensorflow(first50_builder: Path, tmp_path: Path) -> None:
    code = textwrap.dedent(f"""
        import sys
        import catalog
        ds = catalog.data_source({str(first50_builder)!r}, split="test", data_dir={str(tmp_path)!r})
        assert ds[0]["label"] == 9 and len(ds) == 50
        list(ds)
        roots = {{m.split(".")[0] for m in sys.modules}}
        bad = sorted(roots & {{"tensorflow", "tensorflow_datasets"}})
        assert not bad, bad
        print("ok")
    """)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_import_catalog_does_not_import_requests_or_pillow() -> None:
    code = "import sys, catalog; print(sorted({'requests', 'PIL', 'tqdm'} & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stdout + result.stderr
