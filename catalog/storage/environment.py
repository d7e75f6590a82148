"""The environment variables catalog reads, by name (`catalog.storage.paths` reads them; the CLI
lists them in every `--help`). Kept apart so naming them imports nothing."""

__all__ = ["DATA_DIR_ENV", "DOWNLOAD_DIR_ENV", "MIN_RATE_ENV", "MIRRORS_ENV", "OFFLINE_ENV"]

DATA_DIR_ENV = "CATALOG_DATA_DIR"
DOWNLOAD_DIR_ENV = "CATALOG_DOWNLOAD_DIR"
MIRRORS_ENV = "CATALOG_MIRRORS"
OFFLINE_ENV = "CATALOG_OFFLINE"
MIN_RATE_ENV = "CATALOG_MIN_DOWNLOAD_RATE"  # read by catalog.download.deadline
