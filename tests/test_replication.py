"""The replication world's study: the zoo's accuracy changes from v1 to the replicated test sets."""

import pandas as pd
import pytest

from shifteval import replication


def test_accuracy_changes():
    t = pd.DataFrame({"v1": [0.9, 0.8, 0.7], "a": [0.8, 0.7, 0.75]})
    out = replication.accuracy_changes(t, ["a"])
    assert out["a"]["mean_change"] == pytest.approx((-0.1 - 0.1 + 0.05) / 3)
    assert out["a"]["fraction_dropping"] == pytest.approx(2 / 3)


def test_accuracy_by_bin_averages_back_to_the_whole_set(tmp_path):
    # each model's per-bin accuracies, weighted by the images per bin, are its accuracy on the whole set
    import numpy as np

    from shifteval.datasets.world import build_world
    from shifteval.zoo import ModelSpec, build_zoo

    world = build_world({"n_train": 200, "n_v1": 100, "n_pool": 600, "per_class": 6})
    specs = [ModelSpec("nb", "sklearn", "gaussian_nb"), ModelSpec("lr", "sklearn", "logistic")]
    z = build_zoo(world, specs, store_root=tmp_path, progress=False)
    by_bin, table = replication.accuracy_by_frequency_bin(z, world), z.accuracy_table()
    for key, column in (("v1", "v1"), ("new", "matchedfrequency")):
        n = np.asarray(by_bin[f"n_{key}"], float)
        assert n.sum() == {"v1": 100, "new": 60}[key]
        weighted = (by_bin[key].fillna(0) * n).sum(axis=1) / n.sum()
        assert np.allclose(weighted.to_numpy(), table.loc[weighted.index, column].to_numpy(float))
