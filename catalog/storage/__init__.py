"""Where prepared datasets and downloads live: data and download dirs (`paths`), the names of
the environment variables (`environment`), locks (`locking`, `lock_holder`), disk space
(`diskspace`), shard files and the options they are written with (`shards`), and generations:
a finished dataset published behind a pointer that readers pin (`generations`). The seam where
other storage (object stores) will plug in."""
