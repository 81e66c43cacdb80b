"""shifteval: a reproducible compendium on accuracy drops under dataset replication.

The package is laid out so that its tree says what is science and what is machinery:

- science, one module per thing computed (DESIGN.md): :mod:`shifteval.linfit` (Recht et al. 2019),
  :mod:`shifteval.selection` (Engstrom et al. 2020), :mod:`shifteval.matching` (Anzaku et al.),
  :mod:`shifteval.autoeval` (label-free evaluation with OOD detection), :mod:`shifteval.mlm` and
  :mod:`shifteval.corruptions` (the Misclassification Likelihood Matrix);
- data: :mod:`shifteval.datasets` (the embedded replication world, the papers' published tables, loaders
  of the real datasets) and :mod:`shifteval.zoo` (model specifications, training, the prediction store);
- figures: :mod:`shifteval.viz`, one module per chapter;
- machinery: :mod:`shifteval.book` (executing chapters, recording results and claims, building the
  book, the command line) and :mod:`shifteval.utils` (atomic I/O, compatibility shims).
"""

from importlib import metadata

try:
    __version__ = metadata.version("shifteval")
except metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"
