"""The replication world's study: the zoo's accuracy changes from v1 to the replicated test sets."""

import pandas as pd
import pytest

from shifteval import replication


def test_accuracy_changes():
    t = pd.DataFrame({"v1": [0.9, 0.8, 0.7], "a": [0.8, 0.7, 0.75]})
    out = replication.accuracy_changes(t, ["a"])
    assert out["a"]["mean_change"] == pytest.approx((-0.1 - 0.1 + 0.05) / 3)
    assert out["a"]["fraction_dropping"] == pytest.approx(2 / 3)
