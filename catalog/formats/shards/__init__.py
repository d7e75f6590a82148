"""Shard files other tools wrote: TFRecord files of tf.train.Example (`tfrecord`), WebDataset
tar shards (`webdataset`).

Helper of the family: `members` (the members of a zip or tar archive, read in place, every
name checked to stay inside it).
"""
