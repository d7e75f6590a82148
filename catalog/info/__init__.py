"""What is known about a prepared dataset: `DatasetInfo` and its dataset_info.json
(`dataset_info`), its text form for people (`text`), and split specs: which examples ``split=``
selects, resolved as TFDS resolves them (`splits`)."""
