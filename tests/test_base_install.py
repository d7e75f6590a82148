"""The base install (no extras: no pyarrow, no pandas) prepares every kind of own file the
guide names; Parquet, which needs the extra, says so in one line.

CI also runs `tests/base_install_check.py` in a venv installed with ``pip install -e .``;
here the same script refuses pyarrow and pandas in its processes, as if they were absent.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHECK = Path(__file__).parent / "base_install_check.py"


def test_own_files_prepare_without_pyarrow_and_pandas() -> None:
    run = subprocess.run(
        [sys.executable, str(CHECK), "--without", "pyarrow,pandas"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    for name in ("people_csv", "people_tsv", "semicolon", "events", "photos", "speech"):
        assert f"{name}: prepared and read back" in run.stdout
    assert "parquet without pyarrow: catalog: error:" in run.stdout
