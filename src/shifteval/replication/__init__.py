"""The replication world's study (the replication-world chapter), on top of the world and its zoo.

- :mod:`.changes` — how the zoo's accuracies change from v1 to the replicated test sets: mean change and
  share of models dropping per sampling strategy, the world's version of Recht et al. (2019), Table 2,
  on the world's own replication round or on another one.

Every public name of these modules is importable from ``shifteval.replication``.
"""

from .changes import (
    accuracy_by_frequency_bin,
    accuracy_changes,
    change_table,
    matched_change_by_bins,
    replication_changes,
    table2,
)

__all__ = [
    "accuracy_by_frequency_bin",
    "accuracy_changes",
    "change_table",
    "matched_change_by_bins",
    "replication_changes",
    "table2",
]
