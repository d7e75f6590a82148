"""Where prepared datasets and downloads live: data and download dirs (`paths`), locks
(`locking`, `lock_holder`), free space (`diskspace`), shard files and the options they are
written with (`shards`), publishing a finished dataset (`publish`), and checking what is stored
against what was written (`verify`). The seam where other storage (object stores) plugs in."""
