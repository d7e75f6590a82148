"""Where prepared datasets and downloads live: data and download dirs (`paths`), locks
(`locking`, `lock_holder`), disk space (`diskspace`), shard files and the options they are
written with (`shards`), and publishing a finished dataset (`publish`). The seam where other
storage (object stores) will plug in."""
