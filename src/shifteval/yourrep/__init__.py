"""Your own replication: a folder of your models' predictions, validated, and the book's analyses of it.

- :mod:`shifteval.yourrep.folder`: the folder layout, its validation and loading;
- :mod:`shifteval.yourrep.analysis`: the analyses of the ``your-replication`` chapter;
- :mod:`shifteval.yourrep.export`: writing folders (``shifteval export-predictions``);
- :mod:`shifteval.yourrep.report`: the numbers the chapter states, gathered from the analyses;
- :mod:`shifteval.yourrep.example`: a tiny in-memory folder for examples and tests.
"""

from . import analysis, example, export, folder, report

__all__ = ["analysis", "example", "export", "folder", "report"]
