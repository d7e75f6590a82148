"""Source-format readers: turn downloaded files into examples, so most builders need no Python.

One module per format; each declares a `SourceFormat` (see `catalog.formats.base`): the files
it reads by role, the options a split may give it, the features its examples hold, and the
reader. A builder's split names its format, which file fills each role, and its options. A format
that declares `random_access` gives any range of examples without reading those before it,
which the shard plan (`catalog.prepare.shard_plan`) uses to write shards independently; amat does
not (text lines), so its units read from the start and skip.

============  ==========================================================================
format        reads
============  ==========================================================================
idx           IDX images + labels files (MNIST family), gzip'd or not
cifar_bin     CIFAR binary batches: label byte(s) + a channel-planar 32x32x3 image
npz           a NumPy .npz file, one array per feature (never unpickled)
npy           two NumPy .npy files, images and labels, memory-mapped
image_folder  image files labelled by folder or path, in a directory or streamed from a zip/tar
amat          text .amat files, one image per line as 0/1 values
mat           MATLAB .mat files, v5 and v7.3/HDF5 (the optional extra catalog[mat])
hdf5          HDF5 files: a dataset (or column) per feature (the optional extra catalog[hdf5])
norb          small NORB's binary matrix files: stereo image pairs, categories, info
mat_records   image files annotated by a .mat struct array: file, class, box (Stanford Cars)
image_tables  images in a zip described by whitespace tables keyed by file name (CelebA)
clevr         CLEVR: an image folder, its scenes' objects and its questions (JSON)
kitti         KITTI object detection: images, label files, the reference's split by video
cub           Caltech-UCSD Birds 2011: images, train/test split, boxes, segmentation masks
delimited     CSV/TSV text, one example per row, columns mapped to features
text_cut      one text file cut into pieces by fractions, one piece per split
text_folder   text files in one folder per class, e.g. inside a tar archive
squad_json    SQuAD-style JSON, flattened to one example per question
wav_folder    WAV files labelled by path; listing files; windows of long recordings
tfrecord      TFRecord files of tf.train.Example protos, Example keys mapped to features
mat_ids       image files named by ids from a .mat array, labels in another
raw_images    raw uint8 images back to back (STL-10), labels one byte each
image_csv     image files labelled by a CSV table of file names
image_list    a list file, one example per line: image path and fields
voc           PASCAL VOC detection: id lists, JPEGs and XML annotations with boxes
json_lines    JSON Lines, one object per line, keys mapped to features
parquet       Parquet files, one example per row (the optional extra catalog[parquet])
webdataset    WebDataset tar shards, members sharing a key make one example
croissant     a Croissant file's record set: its files, extracts, transforms and joins
image_tar     images in a tar or a tar of tars (ImageNet), indexed once, read in place
coco_json     COCO: an annotation JSON and a zip of the JPEGs it names, boxes normalised
tfds          a TFDS builder's own generators (tfds:NAME), run without TensorFlow (catalog[tfds])
============  ==========================================================================
"""

from __future__ import annotations

from catalog.formats.annotations import (
    clevr,
    coco_json,
    cub,
    image_list,
    image_tables,
    kitti,
    mat_records,
    voc_xml,
)
from catalog.formats.arrays import amat, cifar_bin, hdf5, idx, mat, norb, npz
from catalog.formats.audio import wav_folder
from catalog.formats.base import Option, Role, Source, SourceFile, SourceFormat
from catalog.formats.croissant import format as croissant_records
from catalog.formats.images import image_csv, image_folder, image_tar, raw_images
from catalog.formats.shards import tfrecord, webdataset
from catalog.formats.tables import csv_format as delimited
from catalog.formats.tables import json_format as json_lines
from catalog.formats.tables import parquet
from catalog.formats.text import squad_json, text_cut, text_folder
from catalog.formats.tfds import reader as tfds_reader

__all__ = ["FORMATS", "Option", "Role", "Source", "SourceFile", "SourceFormat"]

#: Every source format by the name a builder spec uses. Add new readers here.
FORMATS: dict[str, SourceFormat] = {
    f.name: f
    for f in (
        idx.FORMAT,
        cifar_bin.FORMAT,
        npz.FORMAT,
        npz.NPY_FORMAT,
        image_folder.FORMAT,
        amat.FORMAT,
        mat.FORMAT,
        delimited.FORMAT,
        text_cut.FORMAT,
        text_folder.FORMAT,
        squad_json.FORMAT,
        wav_folder.FORMAT,
        tfrecord.FORMAT,
        mat.ID_FORMAT,
        raw_images.FORMAT,
        image_csv.FORMAT,
        image_list.FORMAT,
        voc_xml.FORMAT,
        json_lines.FORMAT,
        parquet.FORMAT,
        webdataset.FORMAT,
        croissant_records.FORMAT,
        image_tar.FORMAT,
        coco_json.FORMAT,
        hdf5.FORMAT,
        norb.FORMAT,
        mat_records.FORMAT,
        image_tables.FORMAT,
        clevr.FORMAT,
        kitti.FORMAT,
        cub.FORMAT,
        tfds_reader.FORMAT,
    )
}
