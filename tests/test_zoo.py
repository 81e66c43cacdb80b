"""The zoo: prediction format, the store's atomicity and validation, caching, models that learn."""

import json

import numpy as np
import pytest

from shifteval import nets, zoo
from shifteval.datasets import world as worlds
from shifteval.zoo import models
from shifteval.zoo.store import PredictionStore, validate_predictions


@pytest.fixture(scope="module")
def tiny_world():
    return worlds.build_world({"n_train": 500, "n_v1": 200, "n_pool": 2000, "per_class": 20})


def test_store_round_trip_and_format(tmp_path):
    store = PredictionStore(tmp_path)
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], dtype=np.float64)
    saved = store.save("m1", "v1", np.array([0, 1]), probs, {"epochs": 3})
    assert saved.accuracy == 0.5
    with np.load(tmp_path / "m1" / "v1.npz", allow_pickle=False) as data:
        assert sorted(data.files) == ["labels", "probs"]
        assert data["labels"].dtype == np.int64 and data["probs"].dtype == np.float32
    meta = json.loads((tmp_path / "m1" / "v1.json").read_text())
    assert meta == {
        "model": "m1",
        "dataset": "v1",
        "n": 2,
        "n_classes": 3,
        "accuracy": 0.5,
        "parameters": {"epochs": 3},
    }
    loaded = store.load("m1", "v1")
    assert np.allclose(loaded.probs, probs) and loaded.predicted.tolist() == [0, 2]
    assert store.models() == ["m1"] and store.datasets("m1") == ["v1"]
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.parametrize(
    ("labels", "probs", "message"),
    [
        ([0, 1], [[0.5, 0.5]], "m/d: 'labels' must have 1 entries .one per example., got 2"),
        ([0], [[0.5, 0.6]], "m/d: 'probs': every row must sum to 1; row 0 sums to 1.1000"),
        ([0], [[2.0, -1.0]], r"m/d: 'probs' must hold probabilities in \[0, 1\]; found 2"),
        ([0], [[np.nan, 1.0]], "NaN"),
        ([3], [[0.5, 0.5]], r"m/d: 'labels' must lie in \[0, 2\); found 3"),
        ([0.0], [[0.5, 0.5]], "'labels' must be a 1-D integer array"),
        (np.array([], dtype=np.int64), np.zeros((0, 2)), "must be a non-empty N×K numeric array"),
        ([0], [[0.5, 0.5, 0.0]], None),  # valid: three classes, label 0
    ],
)
def test_validation_messages(labels, probs, message):
    if message is None:
        y, p = validate_predictions(np.asarray(labels), np.asarray(probs, dtype=float), "m/d")
        assert y.dtype == np.int64 and p.dtype == np.float32
        return
    with pytest.raises(ValueError, match=message):
        validate_predictions(np.asarray(labels), np.asarray(probs, dtype=float), "m/d")


def test_store_refuses_pickles_and_malformed_files(tmp_path):
    store = PredictionStore(tmp_path)
    (tmp_path / "m").mkdir()
    np.savez(tmp_path / "m" / "d.npz", labels=np.array([object()], dtype=object), probs=np.ones((1, 1)))
    (tmp_path / "m" / "d.json").write_text("{}")
    with pytest.raises(ValueError, match="not a readable .npz"):
        store.load("m", "d")
    np.savez(tmp_path / "m" / "e.npz", labels=np.array([0]))
    (tmp_path / "m" / "e.json").write_text("{}")
    with pytest.raises(ValueError, match=r"missing array\(s\) \['probs'\]"):
        store.load("m", "e")
    with pytest.raises(FileNotFoundError, match="expected .*x.npz"):
        store.load("m", "x")
    with pytest.raises(ValueError, match="no slashes"):
        store.save("a/b", "d", np.array([0]), np.ones((1, 1)))


def test_a_write_that_dies_midway_leaves_no_entry(tmp_path, monkeypatch):
    store = PredictionStore(tmp_path)
    import shifteval.zoo.store as store_module

    def boom(path, obj):
        raise KeyboardInterrupt

    monkeypatch.setattr(store_module, "atomic_write_json", boom)
    with pytest.raises(KeyboardInterrupt):
        store.save("m", "d", np.array([0]), np.ones((1, 1)))
    assert not store.has("m", "d")  # the npz may exist, but without its sidecar the entry is incomplete


def test_default_zoo_spans_families_and_is_large_enough():
    specs = models.default_zoo()
    assert len(specs) >= 30
    assert {s.family for s in specs} == {"sklearn", "cnn", "timm"}
    assert len({s.name for s in specs}) == len(specs)
    losses = {s.params.get("loss", "ce") for s in specs if s.family == "cnn"}
    assert losses == {"ce", "label_smoothing", "focal"}
    assert {"random_features", "fisher_vector"} <= {s.kind for s in specs}
    with pytest.raises(ValueError, match="zoo size"):
        models.default_zoo("huge")


def test_fisher_vector_encoding_shape_and_norm():
    rng = np.random.default_rng(0)
    images = rng.random((30, 16, 16)).astype(np.float32)
    enc = models.FisherVectorEncoder(k=3, dims=4).fit(images)
    fv = enc.transform(images)
    assert fv.shape == (30, 2 * 3 * 4)
    assert np.allclose(np.linalg.norm(fv, axis=1), 1)


def test_focal_loss_reduces_to_cross_entropy_at_gamma_zero():
    import torch

    logits = torch.randn(8, 10, generator=torch.Generator().manual_seed(0))
    target = torch.arange(8) % 10
    ce = torch.nn.functional.cross_entropy(logits, target)
    assert float(nets.focal_loss(logits, target, gamma=0.0)) == pytest.approx(float(ce), rel=1e-6)
    assert float(nets.focal_loss(logits, target, gamma=2.0)) < float(ce)


def test_build_zoo_trains_once_and_models_learn(tiny_world, tmp_path):
    specs = models.default_zoo("smoke")
    z = zoo.build_zoo(tiny_world, specs, store_root=tmp_path, progress=False)
    table = z.accuracy_table()
    assert list(table.index) == [s.name for s in specs]
    assert set(table.columns) == {"family", *tiny_world.split_names}
    assert (table["v1"] > 0.3).all()  # every model beats chance (0.1) by a wide margin
    mtimes = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.npz")}
    again = zoo.build_zoo(tiny_world, specs, store_root=tmp_path, progress=False)  # cached: nothing retrained
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.npz")} == mtimes
    assert again.accuracy_table().equals(table)
    # the stored predictions are exactly the world's labels, in split order
    p = z.predictions(specs[0].name, "v1")
    assert np.array_equal(p.labels, tiny_world.labels[tiny_world.split_index("v1")])
    # accuracy_on reads subsets of the pool predictions
    sub = tiny_world.split_index("matchedfrequency")
    assert z.accuracy_on(tiny_world, sub)[specs[0].name] == pytest.approx(
        table.loc[specs[0].name, "matchedfrequency"]
    )


def test_changed_spec_is_retrained(tiny_world, tmp_path):
    spec = models.ModelSpec("m", "sklearn", "logistic", {"C": 0.1})
    zoo.build_zoo(tiny_world, [spec], store_root=tmp_path, progress=False)
    before = zoo.build_zoo(tiny_world, [spec], store_root=tmp_path, progress=False).accuracy_table()
    changed = models.ModelSpec("m", "sklearn", "logistic", {"C": 100.0})
    after = zoo.build_zoo(tiny_world, [changed], store_root=tmp_path, progress=False)
    assert after.predictions("m", "v1").meta["parameters"]["spec_key"] == changed.key()
    assert not after.accuracy_table().equals(before)


def test_torch_training_is_reproducible(tiny_world):
    spec = models.ModelSpec("c", "cnn", "small_cnn", {"width": 4, "depth": 2, "epochs": 1})
    tr = tiny_world.split_index("train")
    x = {"v1": tiny_world.images[tiny_world.split_index("v1")]}
    a = models.train_and_predict(spec, tiny_world.images[tr], tiny_world.labels[tr], x, seed=0)
    b = models.train_and_predict(spec, tiny_world.images[tr], tiny_world.labels[tr], x, seed=0)
    assert np.array_equal(a["v1"], b["v1"])


def test_parallel_and_one_by_one_zoos_store_identical_predictions(tiny_world, tmp_path):
    """Processes side by side (one torch thread each) give the zoo that one process gives, bit for bit."""
    specs = [
        models.ModelSpec("c", "cnn", "small_cnn", {"width": 4, "depth": 2, "epochs": 1}),
        models.ModelSpec("nb", "sklearn", "gaussian_nb"),
        models.ModelSpec("lr", "sklearn", "logistic", {"C": 0.1}),
    ]
    one = zoo.build_zoo(tiny_world, specs, store_root=tmp_path / "one", progress=False, workers=1)
    two = zoo.build_zoo(tiny_world, specs, store_root=tmp_path / "two", progress=False, workers=2)
    for spec in specs:
        for split in tiny_world.split_names:
            a, b = one.predictions(spec.name, split), two.predictions(spec.name, split)
            assert np.array_equal(a.probs, b.probs) and a.meta == b.meta, (spec.name, split)


def test_zoo_predictions_do_not_depend_on_the_callers_thread_count(tiny_world):
    """Zoo models train on one torch thread whatever the caller set, so a machine's core count does not
    change a stored prediction (torch's CPU kernels split sums by thread count)."""
    import torch

    spec = models.ModelSpec("c", "cnn", "small_cnn", {"width": 4, "depth": 2, "epochs": 1})
    tr = tiny_world.split_index("train")
    x = {"v1": tiny_world.images[tiny_world.split_index("v1")]}
    before, out = torch.get_num_threads(), {}
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            out[threads] = models.train_and_predict(spec, tiny_world.images[tr], tiny_world.labels[tr], x)
            assert torch.get_num_threads() == threads  # restored after training
    finally:
        torch.set_num_threads(before)
    assert np.array_equal(out[1]["v1"], out[2]["v1"])


def test_zoo_predictions_do_not_depend_on_the_callers_blas_threads(tiny_world):
    """The same for scikit-learn models, whose solvers call a multi-threaded BLAS."""
    from threadpoolctl import threadpool_limits

    spec = models.ModelSpec("lr", "sklearn", "logistic", {"C": 0.1})
    tr = tiny_world.split_index("train")
    x = {"train": tiny_world.images[tr]}
    out = {}
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            out[threads] = models.train_and_predict(spec, tiny_world.images[tr], tiny_world.labels[tr], x)
    assert np.array_equal(out[1]["train"], out[2]["train"])


@pytest.mark.parametrize("value", ["0", "-2", "many"])
def test_a_bad_worker_count_is_refused_by_name(monkeypatch, value):
    monkeypatch.setenv("SHIFTEVAL_ZOO_WORKERS", value)
    with pytest.raises(ValueError, match="SHIFTEVAL_ZOO_WORKERS"):
        zoo.workers_for(5)


def test_a_script_without_a_main_guard_trains_in_one_process(tmp_path):
    """Worker processes import the main script again; one without the guard gets a warning and one process
    (it would otherwise start workers that start workers)."""
    import subprocess
    import sys

    script = tmp_path / "plain.py"
    script.write_text(
        "from shifteval.datasets.world import build_world\n"
        "from shifteval.zoo import ModelSpec, build_zoo\n"
        "w = build_world({'n_train': 200, 'n_v1': 50, 'n_pool': 300, 'per_class': 3})\n"
        f"z = build_zoo(w, [ModelSpec('nb', 'sklearn', 'gaussian_nb'), ModelSpec('lr', 'sklearn', 'logistic')],"
        f" store_root={str(tmp_path / 'store')!r}, progress=False, workers=2)\n"
        "print(z.names)\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=None)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "['nb', 'lr']" in out.stdout and "training the zoo in one process" in out.stderr


def test_timm_model_trains_from_scratch(tiny_world):
    spec = models.ModelSpec("t", "timm", "resnet10t", {"epochs": 1})
    tr = tiny_world.split_index("train")[:200]
    out = models.train_and_predict(
        spec, tiny_world.images[tr], tiny_world.labels[tr], {"v1": tiny_world.images[:10]}
    )
    assert out["v1"].shape == (10, 10) and np.allclose(out["v1"].sum(axis=1), 1, atol=1e-5)
