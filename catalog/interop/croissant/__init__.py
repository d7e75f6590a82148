"""Croissant (https://mlcommons.org/croissant/), the JSON-LD metadata format of ML datasets that
dataset search engines, Kaggle, OpenML and the Hugging Face Hub publish.

- `catalog.interop.croissant.write`: a dataset's Croissant 1.0 description (`to_croissant`),
  for ``catalog croissant NAME`` and the web catalog's pages.
- `catalog.interop.croissant.read`: a Croissant file as an in-memory `BuilderSpec` (the same one
  a builder.yaml gives), so its files are downloaded, checked and read by the usual path.
"""

#: What a Croissant 1.0 file says it conforms to.
CROISSANT_1_0 = "http://mlcommons.org/croissant/1.0"

__all__ = ["CROISSANT_1_0"]
