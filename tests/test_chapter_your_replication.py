"""The your-replication chapter: the worked example, the ImageNetV2-derived folder, votes of varying n,
invalid folders, and the export command."""

import json
import re

import numpy as np
import pytest
from conftest import copy_project, run_default, shifteval

SMALL_WORLD = "{n_train: 1000, n_v1: 400, n_pool: 3000, per_class: 40}"


def _results(project):
    return json.loads((project / "book" / "chapters" / "your-replication.results.json").read_text())


def _page_text(project, sources=True):
    nb = json.loads((project / "book" / "chapters" / "your-replication.ipynb").read_text())
    texts = []
    for cell in nb["cells"]:
        if sources:
            texts.append("".join(cell["source"]))
        for o in cell.get("outputs", []):
            texts.append("".join(o.get("data", {}).get("text/markdown", "")))
    return "\n".join(texts)


@pytest.fixture(scope="module")
def smoke_export(tmp_path_factory):
    """The smoke world's zoo written by `shifteval export-predictions`."""
    out = tmp_path_factory.mktemp("export") / "worked"
    project = copy_project(tmp_path_factory.mktemp("exp-project") / "project")
    res = shifteval("export-predictions", "--out", str(out), "--zoo-size", "smoke", "--world", SMALL_WORLD,
                    cwd=project)  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "6 models, v1 vs matchedfrequency" in res.stdout
    return out


@pytest.mark.slow
def test_export_writes_the_folder_format(smoke_export):
    from shifteval.yourrep import folder

    d = folder.load_folder(smoke_export)
    assert len(d.models) == 6 and set(d.votes) == {"original", "new"}
    assert all(np.all(n == 40) for _, n in d.votes.values())
    assert set(d.probs["unlabeled"]) == set(d.models) and d.names["unlabeled"] == "threshold0.7"
    assert json.loads((smoke_export / "export.json").read_text())["zoo_size"] == "smoke"
    meta = json.loads((smoke_export / "predictions" / d.models[0] / "new.json").read_text())
    assert meta["dataset"] == "new" and 0 <= meta["accuracy"] <= 1


@pytest.mark.slow
def test_worked_example_smoke_runs_every_analysis(project):
    out = shifteval("run", "your-replication", "--params", "smoke", cwd=project)
    assert out.returncode == 0, out.stderr[-3000:]
    res = _results(project)
    assert all(v is None for v in res["analyses"].values()), res["analyses"]
    assert len(res["claims"]) >= 6
    for key in ("fits", "references", "matching", "selection", "mlm", "label_free"):
        assert res[key], key
    assert res["fits"]["probit"]["n"] == 6 and len(res["accuracies"]) == 6
    text = _page_text(project)
    for claim in res["claims"]:
        assert claim["text"] in text, claim["id"]
    assert "Skipped:" not in _page_text(project, sources=False)


@pytest.mark.slow
def test_imagenetv2_release_folder_skips_matching_and_says_so(project, tmp_path):
    from shifteval.datasets import released

    corr = released.imagenetv2_correctness()
    root = tmp_path / "inv2"
    made = shifteval("export-predictions", "--source", "imagenetv2-release", "--out", str(root), cwd=project)
    assert made.returncode == 0 and "67 models" in made.stdout, made.stderr[-2000:]
    out = shifteval("run", "your-replication", "--params", "smoke", "--data", str(root), cwd=project)
    assert out.returncode == 0, out.stderr[-3000:]
    res = _results(project)
    assert res["analyses"]["linear_fits"] is None
    assert res["analyses"]["matching"].startswith("no model has probabilities on both sets")
    assert "matching" not in res and "mlm" not in res
    assert res["drop"]["n"] == len(corr.models) and res["drop"]["n_drop"] == len(corr.models)
    # the fitted models are exactly the published table's, so the ImageNet line is the closer one
    assert res["fit_facts"]["closer"] == "ImageNet" and abs(res["fit_facts"]["res_closer"]) < 0.5
    text = _page_text(project)
    assert (
        "Skipped: matched evaluation (algorithms 1 and 2), since no model has probabilities on both sets"
        in text
    )
    assert "Skipped: selection-frequency adjustment, since no votes were given" in text
    assert res["provenance"]["parameters"]["data_dir"] == str(root.resolve())


@pytest.mark.slow
def test_votes_of_varying_n_run_the_selection_adjustment(project, smoke_export, tmp_path):
    import shutil

    root = tmp_path / "varying"
    shutil.copytree(smoke_export, root)
    rng = np.random.default_rng(0)
    for s in ("original", "new"):
        with np.load(root / "votes" / f"{s}.npz") as v:
            k, n = v["k"], v["n"]
        keep = rng.integers(5, 41, len(k))  # a subset of each image's 40 voters
        np.savez(root / "votes" / f"{s}.npz", k=rng.hypergeometric(k, n - k, keep), n=keep)
    out = shifteval("run", "your-replication", "--params", "smoke", "--data", str(root), cwd=project)
    assert out.returncode == 0, out.stderr[-3000:]
    res = _results(project)
    sel = res["selection"]
    assert len(sel["annotators"]) > 10 and sel["jackknife"] is None
    for row in sel["per_model"].values():
        assert 0 <= row["parametric_low"] <= row["parametric_high"] <= 1
        assert 0 <= row["naive"] <= 1 and row["jackknife"] is not None


def test_invalid_folder_is_refused_before_anything_runs(project, tmp_path):
    root = tmp_path / "bad"
    (root / "labels").mkdir(parents=True)
    np.save(root / "labels" / "original.npy", np.array([0, 1, 2]))
    (root / "predictions" / "m").mkdir(parents=True)
    np.savez(root / "predictions" / "m" / "original.npz", probs=np.full((3, 3), 0.5))
    out = shifteval("run", "your-replication", "--params", "smoke", "--data", str(root), cwd=project)
    assert out.returncode != 0
    err = out.stderr
    assert "labels/new.npy: missing" in err and "predictions/m/new.npz: missing" in err
    assert re.search(r"original\.npz.*sum to 1", err)
    assert err.startswith("shifteval: error: ") and "executing" not in err  # refused before a kernel starts
    assert not (project / "book" / "chapters" / "your-replication.ipynb").exists()


@pytest.mark.slow
def test_data_folder_changes_reach_the_cache_key(project, smoke_export, tmp_path):
    import shutil

    root = tmp_path / "w"
    shutil.copytree(smoke_export, root)
    args = ("run", "your-replication", "--params", "smoke", "--data", str(root))
    assert shifteval(*args, cwd=project).returncode == 0
    assert "up to date" in shifteval(*args, cwd=project).stderr
    shutil.rmtree(root / "votes")
    again = shifteval(*args, cwd=project)
    assert again.returncode == 0 and "up to date" not in again.stderr
    assert _results(project)["analyses"]["selection"].startswith("no votes were given")


def test_your_replication_default_run_claims_hold(default_project):
    res = run_default(default_project, "your-replication")
    assert res["provenance"]["strict_claims"] and all(c["holds"] for c in res["claims"])
    assert len(res["claims"]) >= 10 and res["drop"]["n"] == 31


def _tiny_real_sets(root, rng):
    """CIFAR-10 (pickled test batch), CIFAR-10.1 (.npy) and CINIC-10 (class folders of PNGs), tiny, in
    their official formats."""
    from PIL import Image

    from shifteval.datasets import real

    (root / "cifar10" / "cifar-10-batches-py").mkdir(parents=True)
    images = rng.integers(0, 256, (60, 32, 32, 3), dtype=np.uint8)
    batch = real.pickle_cifar_batch(images, np.arange(60) % 10, "testing batch 1 of 1")
    (root / "cifar10" / "cifar-10-batches-py" / "test_batch").write_bytes(batch)
    (root / "cifar10.1").mkdir()
    np.save(
        root / "cifar10.1" / "cifar10.1_v6_data.npy", rng.integers(0, 256, (40, 32, 32, 3), dtype=np.uint8)
    )
    np.save(root / "cifar10.1" / "cifar10.1_v6_labels.npy", np.arange(40) % 10)
    for i, cls in enumerate(real.CIFAR10_CLASSES):
        (root / "cinic10" / "test" / cls).mkdir(parents=True)
        for j in range(2):
            pixels = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / "cinic10" / "test" / cls / f"cifar10-test-{i}{j}.png")


def _marked_where_false(project, res) -> None:
    """Every sentence that does not hold is on the page, marked as such (a run that is not strict)."""
    text = _page_text(project)
    for claim in res["claims"]:
        assert claim["text"] in text, claim["id"]
        if not claim["holds"]:  # marked after it in a sentence, above it in the box of a paragraph's claim
            at = text.rindex(claim["text"])
            near = text[max(0, at - 100) : at + len(claim["text"]) + 400].lower()
            assert "does not hold in this run" in near, claim["id"]


@pytest.mark.slow
def test_predictions_of_timm_models_reach_the_page_in_one_command(project, tmp_path):
    """`shifteval predict` (three timm models, random weights) → `shifteval run your-replication --data STORE`;
    then the same with two of them, with the chapter's default parameters, as a user runs it: two models
    allow no fit, and these two leave no image unmatched by either algorithm (a ratio of fractions unmatched
    that is 0 to 0), which the page must state rather than fail on."""
    import torch
    from safetensors.torch import save_file

    from shifteval.zoo import PredictionStore, pretrained

    data = tmp_path / "data"
    _tiny_real_sets(data, np.random.default_rng(0))
    weights = []
    for seed, arch in enumerate(("resnet10t", "test_vit", "test_efficientnet")):
        torch.manual_seed(seed)
        model = pretrained.load_model(arch, None, num_classes=10)
        save_file(
            {k: v.contiguous() for k, v in model.state_dict().items()}, str(tmp_path / f"{arch}.safetensors")
        )
        weights += ["--weights", f"{arch}={tmp_path / f'{arch}.safetensors'}"]
    store = tmp_path / "store"
    predicted = shifteval(
        "predict", "--models", "resnet10t", "test_vit", "test_efficientnet",
        "--datasets", "cifar10", "cifar10.1", "cinic10",
        *(x for name in ("cifar10", "cifar10.1", "cinic10") for x in ("--data-root", f"{name}={data / name}")),
        *weights, "--out", str(store), "--workers", "2", cwd=project,
    )  # fmt: skip
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    assert predicted.stdout.count("done ") == 9 and "model-images/s" in predicted.stdout
    assert PredictionStore(store).load("test_vit", "cinic10").probs.shape == (20, 10)

    unnamed = shifteval("run", "your-replication", "--params", "smoke", "--data", str(store), cwd=project)
    assert (
        unnamed.returncode == 1
        and "name the datasets that play the original and the new test set" in unnamed.stderr
    )
    assert "cifar10, cifar10.1, cinic10" in unnamed.stderr

    out = shifteval("run", "your-replication", "--params", "smoke", "--data", str(store), "--original", "cifar10",
                    "--new", "cifar10.1", "--unlabeled", "cinic10", cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    res = _results(project)
    assert res["drop"]["n"] == 3 and res["fits"]["probit"]["n"] == 3
    assert res["analyses"]["linear_fits"] is None and res["analyses"]["matching"] is None
    assert res["analyses"]["label_free"] is None and res["label_free"]
    assert res["claims"] and all(isinstance(c["holds"], bool) for c in res["claims"])  # every claim evaluated
    _marked_where_false(project, res)
    text = _page_text(project)
    assert (
        f"the prediction store `{store.resolve()}` (cifar10 as the original set, cifar10.1 as the new one)"
        in text
    )
    stored = PredictionStore(store)
    acc = {
        m: (stored.load(m, "cifar10").accuracy, stored.load(m, "cifar10.1").accuracy) for m in stored.models()
    }
    for m, row in res["accuracies"].items():  # the page's accuracies are the stored predictions'
        assert (row["acc_original"], row["acc_new"]) == pytest.approx(acc[m]), m
    assert sorted(res["accuracies"]) == sorted(acc)

    import shutil

    two = tmp_path / "two-models"
    shutil.copytree(store, two, ignore=lambda folder, names: ["test_vit"] if folder == str(store) else [])
    out = shifteval("run", "your-replication", "--data", str(two), "--original", "cifar10", "--new", "cifar10.1",
                    cwd=project)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    res = _results(project)
    assert res["drop"]["n"] == 2 and not res["provenance"]["strict_claims"]
    assert res["analyses"]["linear_fits"] == "a fit needs at least 3 models; the folder has 2"
    ids = {c["id"] for c in res["claims"]}
    assert res["matching"]["fu1"] == 0 == res["matching"]["fu2"]  # these two: every target image matched
    assert "none-unmatched" in ids and "algorithm-2-fewer-unmatched" not in ids
    assert all(isinstance(c["holds"], bool) for c in res["claims"])
    _marked_where_false(project, res)
    verdicts = {f["id"]: f["verdict"] for f in res["findings"]}
    assert verdicts["fig1-slope-above-one"] == "not testable" and len(verdicts) >= 4
