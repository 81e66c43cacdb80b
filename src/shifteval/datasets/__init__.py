"""Data sources: published tables, the embedded world, real datasets, their download, released predictions.

Modules: :mod:`~shifteval.datasets.published` (tables transcribed from the papers),
:mod:`~shifteval.datasets.world` (the embedded replication world), :mod:`~shifteval.datasets.real`
(real datasets in their official formats), :mod:`~shifteval.datasets.download` (fetching them with
checksums) and :mod:`~shifteval.datasets.released` (the papers' released per-image predictions).
"""
