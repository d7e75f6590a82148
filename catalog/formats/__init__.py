"""Source-format readers: turn downloaded files into examples, so most builders need no Python.

One module per format; each declares a `SourceFormat` (see `catalog.formats.base`): the files
it reads by role, the options a split may give it, the features its examples hold, and the
reader. A builder's split names its format, which file fills each role, and its options. A format
that declares `random_access` gives any range of examples without reading those before it,
which the shard plan (`catalog.plan`) uses to write shards independently; amat does not (text
lines), so its units read from the start and skip.

============  ==========================================================================
format        reads
============  ==========================================================================
idx           IDX images + labels files (MNIST family), gzip'd or not
cifar_bin     CIFAR binary batches: label byte(s) + a channel-planar 32x32x3 image
npz           a NumPy .npz file, one array per feature (never unpickled)
image_folder  image files in one folder per class, e.g. inside a zip or tar archive
amat          text .amat files, one image per line as 0/1 values
mat           MATLAB .mat files, v5 and v7.3/HDF5 (the optional extra catalog[mat])
============  ==========================================================================
"""

from __future__ import annotations

from catalog.formats import amat, cifar_bin, idx, image_folder, mat, npz
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
    )
}
