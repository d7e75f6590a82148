"""TensorFlow Datasets' own builders as a source of examples, without TensorFlow (``tfds:NAME``).

- `standin`: the TensorFlow TFDS's code gets (``tf.io.gfile`` and dtypes), put inside TFDS's
  own lazy import, never into ``sys.modules``;
- `runtime`: ``tfds:NAME[/CONFIG][:VERSION]`` parsed, the builder class loaded, its split
  generators run;
- `names`: which module of TFDS's registers each name (cached), so one name imports one
  module;
- `downloads`: catalog's download layer as the download manager the builder calls;
- `values`: a raw TFDS example -> what catalog's features encode;
- `reader`: the ``tfds`` source format a ``tfds:`` spec's splits read with.

The spec itself (TFDS features mapped to catalog's, downloads fetched and verified, examples
counted) is made by `catalog.interop.tfds.builder_spec`. tensorflow-datasets is the optional
extra ``catalog[tfds]``, imported only when a ``tfds:`` dataset is used.
"""
