"""Data sources, beneath every paper's package: published tables, the embedded world, real datasets.

Modules: :mod:`~shifteval.datasets.published` (tables transcribed from the papers),
:mod:`~shifteval.datasets.world` (the embedded replication world; its digits, renderer and annotators in
:mod:`~shifteval.datasets.world_render`, the three sampling strategies in
:mod:`~shifteval.datasets.world_sampling`, its summaries in :mod:`~shifteval.datasets.world_summary`),
:mod:`~shifteval.datasets.splits` (the labeled image splits two chapters train and test on),
:mod:`~shifteval.datasets.ood` (synthetic OOD sources and auxiliary outliers),
:mod:`~shifteval.datasets.real` (real datasets in their official formats),
:mod:`~shifteval.datasets.download` (fetching them with checksums) and
:mod:`~shifteval.datasets.released` (the papers' released per-image predictions).
"""
