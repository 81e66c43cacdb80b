"""The replication world's study (the replication-world chapter), on top of the world and its zoo.

- :mod:`.changes` — how the zoo's accuracies change from v1 to the replicated test sets: mean change and
  share of models dropping per sampling strategy, the world's version of Recht et al. (2019), Table 2,
  on the world's own replication round or on another one.
- :mod:`.hypotheses` — two hypotheses Recht et al. tested and rejected (App. B.2.7-B.2.8): cross-validation
  folds of the original data, and a discriminator between original and new test images.

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
from .hypotheses import cross_validation, discriminator, interval_table

__all__ = [
    "accuracy_by_frequency_bin",
    "accuracy_changes",
    "change_table",
    "cross_validation",
    "discriminator",
    "interval_table",
    "matched_change_by_bins",
    "replication_changes",
    "table2",
]
