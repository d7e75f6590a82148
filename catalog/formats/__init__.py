"""Source-format readers: turn downloaded files into examples, so most builders need no Python.

One module per format; each declares a `SourceFormat` (see `catalog.formats.base`): the files
it reads by role, the options a split may give it, the features its examples hold, and the
reader. A builder's split names its format, which file fills each role, and its options.

============  ==========================================================================
format        reads
============  ==========================================================================
idx           IDX images + labels files (MNIST family), gzip'd or not
cifar_bin     CIFAR binary batches: label byte(s) + a channel-planar 32x32x3 image
npz           a NumPy .npz file, one array per feature (never unpickled)
image_folder  image files in one folder per class, e.g. inside a zip or tar archive
amat          text .amat files, one image per line as 0/1 values
mat           MATLAB v5 .mat files via scipy (the optional extra catalog[mat])
delimited     CSV/TSV text, one example per row, columns mapped to features
text_cut      one text file cut into pieces by fractions, one piece per split
text_folder   text files in one folder per class, e.g. inside a tar archive
squad_json    SQuAD-style JSON, flattened to one example per question
wav_folder    WAV files labelled by path; listing files; windows of long recordings
tfrecord      TFRecord files of tf.train.Example protos, Example keys mapped to features
============  ==========================================================================
"""

from __future__ import annotations

from catalog.formats import (
    amat,
    cifar_bin,
    delimited,
    idx,
    image_folder,
    mat,
    npz,
    squad_json,
    text_cut,
    text_folder,
    tfrecord,
    wav_folder,
)
from catalog.formats.base import Option, Role, Source, SourceFormat

__all__ = ["FORMATS", "Option", "Role", "Source", "SourceFormat"]

#: Every source format by the name a builder spec uses. Add new readers here.
FORMATS: dict[str, SourceFormat] = {
    f.name: f
    for f in (
        idx.FORMAT,
        cifar_bin.FORMAT,
        npz.FORMAT,
        image_folder.FORMAT,
        amat.FORMAT,
        mat.FORMAT,
        delimited.FORMAT,
        text_cut.FORMAT,
        text_folder.FORMAT,
        squad_json.FORMAT,
        wav_folder.FORMAT,
        tfrecord.FORMAT,
    )
}
