"""Apache Parquet, the columnar format pandas, Polars, DuckDB and Hugging Face datasets read.

- `catalog.interop.parquet.export`: write a prepared dataset as one Parquet file per split,
  in the column layout Hugging Face datasets uses (``pip install 'catalog[parquet]'``).
"""
