"""Pretrained timm models from local files, prediction jobs in shared passes, and Dask scale-out."""

import dataclasses
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from shifteval.datasets import real
from shifteval.zoo import PredictionStore, predict, pretrained


def _cifar101(root, n: int, seed: int):
    """``n`` random CIFAR-10.1 images in the official .npy format, labelled 0, 1, ..., 9, 0, ..."""
    rng = np.random.default_rng(seed)
    np.save(root / "cifar10.1_v6_data.npy", rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8))
    np.save(root / "cifar10.1_v6_labels.npy", np.arange(n) % 10)
    return root


@pytest.fixture(scope="module")
def cifar_root(tmp_path_factory):
    """A tiny CIFAR-10.1 in its official .npy format."""
    return _cifar101(tmp_path_factory.mktemp("cifar"), 6, seed=0)


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
        statuses = predict.run_jobs(jobs, executor=f"dask://{cluster.scheduler_address}").statuses
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
    while time.time() < deadline and not re.search(r"\b[1-9]\d*/400\b", seen):  # some images predicted
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


@pytest.fixture(scope="module")
def three_weights(tmp_path_factory):
    """Three different random resnet10t weights (one architecture, three models), as safetensors files."""
    import torch
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("three")
    paths = {}
    for i in range(3):
        torch.manual_seed(i)
        model = pretrained.load_model("resnet10t", None, num_classes=10)
        paths[f"r{i}"] = folder / f"r{i}.safetensors"
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(paths[f"r{i}"]))
    return paths


@pytest.fixture(scope="module")
def cifar37(tmp_path_factory):
    """37 CIFAR-10.1 images: no batch size below divides them."""
    return _cifar101(tmp_path_factory.mktemp("cifar37"), 37, seed=3)


def _jobs(weights, root, out, labels, **kw):
    return [predict.Job("resnet10t", "cifar10.1", str(root), str(out), weights=str(weights[m]), name=m, **kw)
            for m in labels]  # fmt: skip


@pytest.mark.slow
def test_fp32_probabilities_do_not_depend_on_batch_size_workers_or_sharing(three_weights, cifar37, tmp_path):
    alone = predict.run_pass(
        _jobs(three_weights, cifar37, tmp_path / "a", ["r1"], batch_size=4, workers=0), False
    )
    shared = predict.run_pass(
        _jobs(three_weights, cifar37, tmp_path / "b", ["r0", "r1", "r2"], batch_size=13, workers=2), False
    )
    assert alone.statuses == ["done"] and shared.statuses == ["done"] * 3
    a, b = (
        PredictionStore(tmp_path / "a").load("r1", "cifar10.1"),
        PredictionStore(tmp_path / "b").load("r1", "cifar10.1"),
    )
    assert np.array_equal(a.probs, b.probs)  # bit for bit
    others = [PredictionStore(tmp_path / "b").load(m, "cifar10.1").probs for m in ("r0", "r2")]
    assert not np.array_equal(others[0], b.probs) and not np.array_equal(others[1], b.probs)  # three models
    # and the same as the one-model convenience function, image by image
    model = pretrained.load_model("resnet10t", three_weights["r1"], num_classes=10)
    images, _ = real.load("cifar10.1", cifar37)
    assert np.array_equal(pretrained.predict(model, images, batch_size=37, progress=False), a.probs)
    meta = b.meta["parameters"]
    assert meta["device"] == "cpu" and meta["precision"] == "fp32" and meta["batch_size"] == 13
    assert meta["workers"] == 2 and meta["shared_pass_with"] == ["r0", "r2"]
    assert meta["data_config"]["input_size"] == [3, 176, 176] and meta["versions"]["torch"]
    assert (
        shared.images == 37 and shared.model_images == 111 and set(shared.model_seconds) == {"r0", "r1", "r2"}
    )
    assert "3 model(s) on cifar10.1: 37 images" in shared.summary() and "model-images/s" in shared.summary()


def test_a_failing_model_does_not_lose_the_others(three_weights, cifar_root, tmp_path, monkeypatch):
    from safetensors.torch import save_file

    wrong = tmp_path / "three-classes.safetensors"
    model3 = pretrained.load_model("resnet10t", None, num_classes=3)
    save_file({k: v.contiguous() for k, v in model3.state_dict().items()}, str(wrong))
    weights = {**three_weights, "bad": wrong}
    load = pretrained.load_model

    def breaks_in_the_second_batch(name, weights, **kw):
        model = load(name, weights, **kw)
        if str(weights).endswith("r2.safetensors"):
            calls = []
            forward = model.forward
            model.forward = lambda x: calls.append(1) or (forward(x) if len(calls) < 2 else 1 / 0 * x)
        return model

    monkeypatch.setattr(pretrained, "load_model", breaks_in_the_second_batch)
    jobs = _jobs(weights, cifar_root, tmp_path / "s", ["r0", "bad", "r2", "r1"], batch_size=3, workers=0)
    report = predict.run_pass(jobs, progress=False)
    assert report.statuses[0] == "done" and report.statuses[3] == "done"
    assert (
        report.statuses[1].startswith("failed: model 'resnet10t' with weights")
        and "10-class" in report.statuses[1]
    )
    assert report.statuses[2] == "failed: division by zero"
    store = PredictionStore(tmp_path / "s")
    assert store.models() == ["r0", "r1"] and store.load("r1", "cifar10.1").probs.shape == (6, 10)
    again = predict.run_pass(jobs, progress=False)  # resumable: the finished models are skipped
    assert again.statuses[0] == again.statuses[3] == "skipped" and again.statuses[1].startswith("failed")


def test_models_with_different_preprocessing_get_their_own_decoded_pass(weights, cifar_root, tmp_path):
    jobs = [
        predict.Job(
            "resnet10t", "cifar10.1", str(cifar_root), str(tmp_path), weights=str(weights[0]), workers=0
        ),
        predict.Job("test_vit", "cifar10.1", str(cifar_root), str(tmp_path), workers=0),
    ]
    report = predict.run_pass(jobs, progress=False)
    assert report.statuses == ["done", "done"]
    assert (report.images, report.model_images) == (6, 12)  # two decoded passes over 6 images
    store = PredictionStore(tmp_path)
    sizes = [
        store.load(m, "cifar10.1").meta["parameters"]["data_config"]["input_size"]
        for m in ("resnet10t", "test_vit")
    ]
    assert sizes == [[3, 176, 176], [3, 160, 160]]
    assert store.load("test_vit", "cifar10.1").meta["parameters"]["shared_pass_with"] == []


def test_reduced_precision_needs_a_gpu(weights, cifar_root, tmp_path):
    job = predict.Job("resnet10t", "cifar10.1", str(cifar_root), str(tmp_path), weights=str(weights[0]),
                      precision="bf16")  # fmt: skip
    if pretrained.device() == "cuda":
        pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match="precision 'bf16' runs under CUDA autocast and needs a GPU"):
        predict.run_job(job, progress=False)
    with pytest.raises(ValueError, match="precision must be one of fp32, bf16, fp16, got 'fp8'"):
        predict.run_job(dataclasses.replace(job, precision="fp8"), progress=False)
    assert not PredictionStore(tmp_path).models()


def test_jobs_group_by_dataset_and_settings():
    jobs = predict.make_jobs(["a", "b=resnet50", "c"], ["cifar10.1"], {"cifar10.1": "/c"}, "/o", workers=2)
    jobs.append(dataclasses.replace(jobs[0], batch_size=7))
    groups = predict.group_jobs(jobs, models_per_pass=8)
    assert [[j.label for j in g] for g in groups] == [["a", "b", "c"], ["a"]]
    assert [j.model for j in groups[0]] == ["a", "resnet50", "c"]
    with pytest.raises(ValueError, match="models per pass must be at least 1"):
        predict.group_jobs(jobs, models_per_pass=0)


def test_make_jobs_refuses_a_name_twice_unused_weights_and_bad_settings():
    roots = {"mnist": "/m"}
    with pytest.raises(ValueError, match=r"model name\(s\) a given twice; store one architecture"):
        predict.make_jobs(["a", "a=resnet50"], ["mnist"], roots, "/o")
    with pytest.raises(ValueError, match="--weights names resnet18, which is not among the models"):
        predict.make_jobs(["a=resnet50"], ["mnist"], roots, "/o", weights={"resnet18": "/w.pth"})
    with pytest.raises(ValueError, match="batch size must be at least 1, got 0"):
        predict.make_jobs(["a"], ["mnist"], roots, "/o", batch_size=0)
    with pytest.raises(ValueError, match="workers must be 0 .* or more, got -1"):
        predict.make_jobs(["a"], ["mnist"], roots, "/o", workers=-1)


def test_one_channel_models_read_color_and_gray_images():
    from PIL import Image

    model = pretrained.load_model("resnet10t", None, num_classes=4, in_chans=1)
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (3, 20, 20, 3), dtype=np.uint8)
    gray = np.stack([np.asarray(Image.fromarray(x).convert("L")) for x in rgb])
    p_rgb = pretrained.predict(model, rgb, progress=False)
    assert p_rgb.shape == (3, 4) and np.array_equal(p_rgb, pretrained.predict(model, gray, progress=False))


def test_store_with_models_of_different_label_spaces_is_refused(tmp_path):
    from shifteval.yourrep import export

    store = PredictionStore(tmp_path / "store")
    for m, k in (("a", 2), ("b", 3)):
        for d, y in (("v1", [0, 1]), ("v2", [1, 0])):
            store.save(m, d, y, np.eye(k)[[0, 1]])
    with pytest.raises(ValueError, match=r"predict different numbers of classes: \{'a': 2, 'b': 3\}"):
        export.from_store(store, tmp_path / "out", "v1", "v2")
    with pytest.raises(ValueError, match="no model in .* with predictions on 'v1' and 'v2' also has 'v3'"):
        export.from_store(store, tmp_path / "out", "v1", "v2", "v3", models=["a"])
