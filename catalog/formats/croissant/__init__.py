"""Croissant: a Croissant file's record set read as mlcroissant reads it (`records`, the format).

Helpers of the family: `files` (the FileObjects and FileSets a record set reads), `values`
(a field's value cast to its data type), `batches` (record sets of plain Parquet or CSV
columns read in batches), `patterns` (its regexes and globs through RE2).
"""
