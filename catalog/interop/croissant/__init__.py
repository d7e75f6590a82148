"""Croissant (https://mlcommons.org/croissant/), the JSON-LD metadata format of ML datasets that
dataset search engines, Kaggle, OpenML and the Hugging Face Hub publish.

- `catalog.interop.croissant.write`: a dataset's Croissant 1.0 description (`to_croissant`),
  for ``catalog croissant NAME`` and the web catalog's pages.
- `catalog.interop.croissant.read`: a Croissant file as an in-memory `BuilderSpec` (the same one
  a builder.yaml gives), so its files are downloaded, checked and read by the usual path.
"""

import os
from pathlib import Path
from urllib.parse import urlsplit

#: What a Croissant 1.0 file says it conforms to.
CROISSANT_1_0 = "http://mlcommons.org/croissant/1.0"
_SUFFIXES = (".json", ".jsonld", ".json-ld")

__all__ = ["CROISSANT_1_0", "is_croissant"]


def is_croissant(argument: str | os.PathLike[str]) -> bool:
    """Whether a `catalog prepare` argument names a Croissant file: an http(s) URL or the path
    of a file, ending in .json or .jsonld, optionally followed by ``#RECORD_SET``; a local
    file only when it holds one JSON document (not JSON Lines, nor an array of records: a
    table, `catalog.formats.tables.json_lines.json_layout`).

    >>> is_croissant("https://example.org/x/croissant.json"), is_croissant("mnist")
    (True, False)
    """
    text = os.fspath(argument)
    path, sep, record_set = text.rpartition("#")  # FILE.json#RECORD_SET
    text = path if sep and path and record_set else text
    parts = urlsplit(text)
    if parts.scheme in ("http", "https"):
        return parts.path.lower().endswith(_SUFFIXES)
    file = Path(text).expanduser()
    if not (text.lower().endswith(_SUFFIXES) and file.is_file()):
        return False
    from catalog.formats.tables.json_lines import json_layout  # a table in JSON is not one

    return json_layout(file) == "document"
