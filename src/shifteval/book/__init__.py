"""The compendium's machinery, kept apart from the science.

:mod:`~shifteval.book.pipeline` executes chapters (jupytext → papermill) and builds the book;
:mod:`~shifteval.book.project` finds chapters and their parameter sets (each parameter declared once, in a
chapter's parameters cell); :mod:`~shifteval.book.provenance` computes cache keys and writes the boxes that
close a page; :mod:`~shifteval.book.assemble` runs ``jupyter-book``; :mod:`~shifteval.book.results` is how
a chapter records its numbers, claims, citations, figures and tables, with the comparisons of
:mod:`~shifteval.book.claims` (a claim's words written in the chapter's prose: :mod:`~shifteval.book.prose`);
:mod:`~shifteval.book.sphinxext` is the book's Sphinx extension. The
``shifteval`` command that drives them is :mod:`shifteval.cli`.
"""
