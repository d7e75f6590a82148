"""Showing datasets to people: example grids (`show`, `show_text`) and the static web catalog
(`site`). Both render from the same `DatasetInfo` and feature descriptions as ``catalog info``.
"""
