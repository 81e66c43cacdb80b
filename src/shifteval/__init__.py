"""shifteval: a reproducible compendium on accuracy drops under dataset replication.

The package is laid out so that its tree says what is science and what is machinery, with
dependencies pointing one way (chapter → study → algorithm → foundations; no import circles):

- science, one package per paper, named for its method, each holding its algorithm modules and the
  chapter's experiment (``study``): :mod:`shifteval.linfit` (Recht et al. 2019),
  :mod:`shifteval.selection` (Engstrom et al. 2020), :mod:`shifteval.matching` (Anzaku et al.),
  :mod:`shifteval.autoeval` (Zhu et al. 2023, label-free evaluation with OOD detection) and
  :mod:`shifteval.mlm` (Sikar et al. 2024, the Misclassification Likelihood Matrix); beside them
  :mod:`shifteval.replication`, the replication world's study (the zoo's accuracy changes);
- foundations beneath them: :mod:`shifteval.datasets` (the embedded replication world, the papers'
  published tables, loaders of the real datasets, the image splits two chapters share),
  :mod:`shifteval.zoo` (model specifications, training, the prediction store), :mod:`shifteval.nets`
  (the networks and the training loop), :mod:`shifteval.corruptions` (twelve perturbations) and
  :mod:`shifteval.utils` (atomic I/O, the cache, input validation, compatibility shims);
- figures: :mod:`shifteval.viz`, one module per chapter (they draw; they record nothing);
- machinery: :mod:`shifteval.book` (executing chapters, recording results, claims, figures and tables,
  building the book), and on top of everything the command line, :mod:`shifteval.cli`.
"""

from importlib import metadata

try:
    __version__ = metadata.version("shifteval")
except metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"
