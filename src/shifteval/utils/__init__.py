"""Plumbing shared by the library and the book, importing nothing else of the package.

:mod:`~shifteval.utils.io` (atomic writes), :mod:`~shifteval.utils.cache` (the one content-addressed
cache), :mod:`~shifteval.utils.validation` (the one set of input checks) and
:mod:`~shifteval.utils.compat` (the torchvision compatibility shim).
"""
