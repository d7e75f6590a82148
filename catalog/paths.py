"""Where catalog keeps things: resolved in one place, argument > environment > platformdirs."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DATA_DIR_ENV", "DOWNLOAD_DIR_ENV", "data_dir", "download_dir"]

DATA_DIR_ENV = "CATALOG_DATA_DIR"
DOWNLOAD_DIR_ENV = "CATALOG_DOWNLOAD_DIR"


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data dir: `explicit`, else $CATALOG_DATA_DIR, else the platform's user data dir."""
    if explicit is not None:
        return Path(explicit).expanduser()
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV]).expanduser()
    import platformdirs  # only needed when neither an argument nor the variable says

    return Path(platformdirs.user_data_dir("catalog", appauthor=False))


def download_dir(
    explicit: str | os.PathLike[str] | None = None,
    data: str | os.PathLike[str] | None = None,
) -> Path:
    """The download cache: `explicit`, else $CATALOG_DOWNLOAD_DIR, else <data dir>/downloads."""
    if explicit is not None:
        return Path(explicit).expanduser()
    if os.environ.get(DOWNLOAD_DIR_ENV):
        return Path(os.environ[DOWNLOAD_DIR_ENV]).expanduser()
    return data_dir(data) / "downloads"
