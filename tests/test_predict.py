"""Pretrained timm models from local files, prediction jobs, and Dask scale-out."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from shifteval.datasets import real
from shifteval.zoo import PredictionStore, predict, pretrained


@pytest.fixture(scope="module")
def cifar_root(tmp_path_factory):
    """A tiny CIFAR-10.1 in its official .npy format."""
    root = tmp_path_factory.mktemp("cifar")
    rng = np.random.default_rng(0)
    np.save(root / "cifar10.1_v6_data.npy", rng.integers(0, 256, (6, 32, 32, 3), dtype=np.uint8))
    np.save(root / "cifar10.1_v6_labels.npy", np.arange(6) % 10)
    return root


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    """A tiny timm model's weights saved to a local safetensors file."""
    from safetensors.torch import save_file

    model = pretrained.load_model("resnet10t", None, num_classes=10)
    path = tmp_path_factory.mktemp("weights") / "resnet10t_cifar.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path))
    return path, model


def test_local_weights_load_offline_and_predict(weights, cifar_root):
    path, original = weights
    model = pretrained.load_model("resnet10t", path, num_classes=10)
    for a, b in zip(model.state_dict().values(), original.state_dict().values(), strict=True):
        assert np.array_equal(a.numpy(), b.numpy())
    images, _ = real.load("cifar10.1", cifar_root)
    probs = pretrained.predict(model, images, batch_size=4, progress=False)
    assert probs.shape == (6, 10) and np.allclose(probs.sum(1), 1, atol=1e-5)


@pytest.mark.slow
def test_missing_cache_without_download_is_a_clear_error(monkeypatch, tmp_path):
    import socket

    from huggingface_hub import constants

    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-cache"))
    lookups = []  # the hub client must not even try the network (it retried for 45 s before failing)
    real_lookup = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: lookups.append(a[0]) or real_lookup(*a, **k))
    offline_before = constants.HF_HUB_OFFLINE
    with pytest.raises(FileNotFoundError, match="not in the local cache and downloads are not allowed"):
        pretrained.load_model("resnet10t", "cache")
    assert lookups == []
    assert constants.HF_HUB_OFFLINE == offline_before  # the offline switch is undone


def test_job_writes_the_store_and_skips_when_done(weights, cifar_root, tmp_path):
    job = predict.Job(
        "resnet10t",
        "cifar10.1",
        str(cifar_root),
        str(tmp_path / "store"),
        weights=str(weights[0]),
        batch_size=4,
    )
    assert predict.run_job(job, progress=False) == "done"
    p = PredictionStore(tmp_path / "store").load("resnet10t", "cifar10.1")
    assert p.labels.tolist() == [0, 1, 2, 3, 4, 5] and p.meta["parameters"]["job"]["dataset"] == "cifar10.1"
    assert predict.run_job(job, progress=False) == "skipped"


def test_label_space_mismatch(weights, cifar_root, tmp_path):
    job = predict.Job("resnet10t", "imagenetv2", str(cifar_root), str(tmp_path), weights=str(weights[0]))
    imgs = tmp_path / "v2" / "0"
    imgs.mkdir(parents=True)
    from PIL import Image

    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(imgs / "a.png")
    job = predict.Job(
        "resnet10t", "imagenetv2", str(tmp_path / "v2"), str(tmp_path / "out"), weights=str(weights[0])
    )
    with pytest.raises(ValueError, match="does not match the 1000-class label space of imagenetv2"):
        predict.run_job(job, progress=False)


@pytest.mark.slow
def test_dask_local_cluster_runs_several_jobs(weights, cifar_root, tmp_path):
    from distributed import LocalCluster

    out = tmp_path / "store"
    jobs = [
        predict.Job(m, "cifar10.1", str(cifar_root), str(out), weights=str(weights[0]), batch_size=3)
        for m in ("resnet10t",)
    ]
    # two more "models": the same weights under other store names exercise several jobs on the cluster
    jobs += [
        predict.Job(
            "resnet10t",
            "cifar10.1",
            str(cifar_root),
            str(tmp_path / f"store{i}"),
            weights=str(weights[0]),
            batch_size=3,
        )
        for i in range(2)
    ]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        statuses = predict.run_jobs(jobs, executor=f"dask://{cluster.scheduler_address}")
    assert statuses == ["done", "done", "done"]
    for job in jobs:
        assert PredictionStore(job.out).has("resnet10t", "cifar10.1")


@pytest.mark.slow
def test_a_killed_job_leaves_the_store_consistent_and_the_rerun_completes(weights, tmp_path):
    rng = np.random.default_rng(1)
    root = tmp_path / "data"
    root.mkdir()
    np.save(root / "cifar10.1_v6_data.npy", rng.integers(0, 256, (400, 32, 32, 3), dtype=np.uint8))
    np.save(root / "cifar10.1_v6_labels.npy", np.arange(400) % 10)
    out = tmp_path / "store"
    code = (
        "from shifteval.zoo import predict\n"
        f"job = predict.Job('resnet10t', 'cifar10.1', {str(root)!r}, {str(out)!r}, weights={str(weights[0])!r}, batch_size=8)\n"
        "predict.run_job(job)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    seen = ""
    while time.time() < deadline and "batch" not in seen:  # wait until prediction is under way
        seen += proc.stderr.read(1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    store = PredictionStore(out)
    assert not store.has("resnet10t", "cifar10.1")  # nothing half-written under a final name
    assert not (out / "resnet10t" / "cifar10.1.npz").exists()
    job = predict.Job("resnet10t", "cifar10.1", str(root), str(out), weights=str(weights[0]), batch_size=64)
    assert predict.run_job(job, progress=False) == "done"
    assert store.load("resnet10t", "cifar10.1").probs.shape == (400, 10)


@pytest.mark.slow
def test_cli_predict_and_errors(weights, cifar_root, tmp_path):
    out = tmp_path / "store"
    cmd = [
        sys.executable,
        "-m",
        "shifteval.cli",
        "predict",
        "--models",
        "resnet10t",
        "--datasets",
        "cifar10.1",
        "--data-root",
        f"cifar10.1={cifar_root}",
        "--weights",
        f"resnet10t={weights[0]}",
        "--out",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "done     resnet10t on cifar10.1" in done.stdout
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert "skipped  resnet10t on cifar10.1" in again.stdout
    bad = subprocess.run(cmd[:-2] + ["--out", str(out), "--datasets", "svhn"], capture_output=True, text=True)
    assert bad.returncode == 1 and "unknown dataset 'svhn'" in bad.stderr
    missing = subprocess.run(
        [c.replace(str(cifar_root), str(tmp_path / "nowhere")) for c in cmd[:-1]] + [str(tmp_path / "o2")],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 1 and "missing file" in missing.stderr and "CIFAR-10.1" in missing.stderr
