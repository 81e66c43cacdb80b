"""shifteval: a reproducible compendium on accuracy drops under dataset replication.

Modules are named after what they compute (see DESIGN.md): :mod:`shifteval.linfit`
(Recht et al. 2019), :mod:`shifteval.datasets` (published tables), :mod:`shifteval.pipeline`
(executing chapters and building the book), :mod:`shifteval.viz` (shared figures).
"""

from importlib import metadata

try:
    __version__ = metadata.version("shifteval")
except metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"
