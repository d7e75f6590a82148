"""Tables: CSV/TSV (`delimited`), JSON Lines (`json_lines`) and Parquet (`parquet`), one example
per row.

Helpers of the family: `csv_dialect` (a CSV's delimiter and encoding, found from its head),
`table_batches` + `csv_batches` (rows read in batches by pyarrow and checked column by column,
the row reader deciding whatever a batch cannot show the same), `typed_values` (JSON/Parquet
values checked against a feature), `folder_metadata` (the metadata table beside an image or
audio folder).
"""
