"""The environment variables catalog reads, by name (`catalog.storage.paths` reads them; the CLI
lists them in every `--help`). Kept apart so naming them imports nothing."""

__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_SIZE_ENV",
    "DATA_DIR_ENV",
    "DOWNLOAD_DIR_ENV",
    "MIN_RATE_ENV",
    "MIRRORS_ENV",
    "OFFLINE_ENV",
    "REMOTE_DEADLINE_ENV",
]

DATA_DIR_ENV = "CATALOG_DATA_DIR"
DOWNLOAD_DIR_ENV = "CATALOG_DOWNLOAD_DIR"
MIRRORS_ENV = "CATALOG_MIRRORS"
OFFLINE_ENV = "CATALOG_OFFLINE"
MIN_RATE_ENV = "CATALOG_MIN_DOWNLOAD_RATE"  # read by catalog.download.deadline
CACHE_DIR_ENV = "CATALOG_CACHE_DIR"  # shards of remote data dirs (catalog.storage.shard_cache)
CACHE_SIZE_ENV = "CATALOG_CACHE_SIZE"  # its size limit, e.g. 50GiB
REMOTE_DEADLINE_ENV = "CATALOG_REMOTE_DEADLINE"  # seconds a bucket read or write retries
