"""The compendium's machinery, kept apart from the science.

:mod:`~shifteval.book.pipeline` executes chapters (jupytext → papermill) and builds the book;
:mod:`~shifteval.book.cli` is the ``shifteval`` command; :mod:`~shifteval.book.results` is how a chapter
records its numbers and claims; :mod:`~shifteval.book.sphinxext` is the book's Sphinx extension.
"""
