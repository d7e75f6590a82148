"""The files of a builder folder, by name: naming them imports nothing (the registry and its
index use them on every `catalog list`; `catalog.spec.model` re-exports them)."""

__all__ = ["CHECKSUMS_FILE", "SPEC_FILE"]

SPEC_FILE = "builder.yaml"
CHECKSUMS_FILE = "checksums.tsv"
