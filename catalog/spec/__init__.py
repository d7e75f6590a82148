"""What a dataset is before anything is downloaded: the registry of builder folders
(`registry`) and each folder's builder.yaml, loaded and checked into a `BuilderSpec`."""
