"""TensorFlow Datasets' on-disk format, without TensorFlow.

- `catalog.interop.tfds.directory`: open a TFDS-prepared directory read-only as DataSources
  (`open_tfds`, `read_tfds_info`, `is_tfds_dir`).
- `catalog.interop.tfds.features`: features.json <-> catalog features.
- `catalog.interop.tfds.codec`: TFDS's serialized Examples <-> catalog examples (`ExampleCodec`).
- `catalog.interop.tfds.encoded`: Tensors TFDS stores as raw or zlib-compressed bytes.
- `catalog.interop.tfds.record_format`: that format registered for `DataSource` to read
  (imported by `directory`).
- `catalog.interop.tfds.export`: write a catalog dataset as a TFDS directory or TFRecord files.
"""

__all__ = ["RECORD_FORMAT_NAME"]

#: ``record_format.name`` of a TFDS directory's records (serialized tf.train.Examples). Here,
#: so that naming the format does not import the Example codec.
RECORD_FORMAT_NAME = "tf-example"
