"""TensorFlow's formats, without TensorFlow, beside catalog's own: `tfrecord` (the framing and
tf.train.Example protos, a codec with no dependency on the rest of catalog) and `tfds`
(directories TensorFlow Datasets prepared: opened read-only, imported, exported)."""
