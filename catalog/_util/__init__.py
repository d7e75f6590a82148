"""Small pieces every stage shares and none owns: sizes and durations as text (`units`),
walking nested batches (`nested`), protobuf varints (`varints`), sha256 of files (`hashing`),
the user's cache dir (`cache_dir`).
Nothing here imports another part of catalog."""
