"""The replication folder: layout, every refused input with its message, partial folders, the analyses."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shifteval.yourrep import analysis, example, export, folder

K = 3


def _arrays(seed=0, n_models=4, n_orig=60, n_new=40):
    rng = np.random.default_rng(seed)
    labels = {"original": rng.integers(0, K, n_orig), "new": rng.integers(0, K, n_new)}
    preds = {}
    for m in range(n_models):
        preds[f"m{m}"] = {}
        for s, y in labels.items():
            logits = rng.normal(0, 1, (len(y), K))
            logits[np.arange(len(y)), y] += 1 + m - (s == "new")
            preds[f"m{m}"][s] = {"probs": np.exp(logits) / np.exp(logits).sum(1, keepdims=True)}
    return labels, preds


def _valid(tmp_path, votes=True, **kw):
    labels, preds = _arrays(**kw)
    v = None
    if votes:
        v = {s: (np.full(len(y), 2), np.full(len(y), 4)) for s, y in labels.items()}
    return export.write_folder(tmp_path / "rep", labels, preds, v, {"original": "A", "new": "B"})


def _error(root):
    with pytest.raises(folder.FolderError) as exc:
        folder.load_folder(root)
    return str(exc.value)


def test_a_valid_folder_loads_in_the_project_prediction_format(tmp_path):
    root = _valid(tmp_path)
    meta = json.loads((root / "predictions" / "m0" / "original.json").read_text())
    assert meta["model"] == "m0" and meta["n"] == 60 and meta["n_classes"] == K
    d = folder.load_folder(root)
    assert d.models == ("m0", "m1", "m2", "m3") and d.n_classes == K
    assert d.correct["original"].shape == (4, 60) and d.correct["new"].shape == (4, 40)
    assert d.names["original"] == "A" and set(d.votes) == {"original", "new"}
    assert all(v is None for k, v in folder.available_analyses(d).items() if k != "label_free")


def test_missing_label_file_is_named(tmp_path):
    root = _valid(tmp_path)
    (root / "labels" / "new.npy").unlink()
    msg = _error(root)
    assert "labels/new.npy: missing" in msg and "expected an int array of true labels" in msg


def test_missing_prediction_file_is_named(tmp_path):
    root = _valid(tmp_path)
    (root / "predictions" / "m2" / "new.npz").unlink()
    assert "predictions/m2/new.npz: missing; expected the predictions of model 'm2' on the new set" in _error(
        root
    )


def test_missing_folder_and_empty_predictions(tmp_path):
    assert "no such folder" in _error(tmp_path / "nothing")
    root = _valid(tmp_path)
    for f in (root / "predictions").rglob("*"):
        if f.is_file():
            f.unlink()
    for d in (root / "predictions").iterdir():
        d.rmdir()
    assert "no model folders" in _error(root)


def test_mismatched_image_counts_are_refused(tmp_path):
    root = _valid(tmp_path)
    np.savez(root / "predictions" / "m1" / "new.npz", probs=np.full((39, K), 1 / K))
    assert "m1/new.npz: 'probs' must have shape (40, K) (one row per image), got (39, 3)" in _error(root)
    np.savez(root / "predictions" / "m1" / "new.npz", predicted=np.zeros(41, int))
    assert "m1/new.npz: 'predicted' must be 40 integers (one per image)" in _error(root)
    np.savez(root / "predictions" / "m1" / "new.npz", correct=np.zeros(3, bool))
    assert "m1/new.npz: 'correct' must be 40 booleans (one per image)" in _error(root)


def test_votes_with_a_different_image_count_are_refused(tmp_path):
    root = _valid(tmp_path)
    np.savez(root / "votes" / "new.npz", k=np.ones(39, int), n=np.full(39, 3))
    assert "votes/new.npz: 'k' must be 40 integers (one per image)" in _error(root)


def test_labels_out_of_range_are_refused(tmp_path):
    root = _valid(tmp_path)
    y = np.load(root / "labels" / "original.npy")
    y[5] = K
    np.save(root / "labels" / "original.npy", y)
    assert f"labels/original.npy: labels must lie in [0, {K}); found {K}" in _error(root)
    y[5] = -1
    np.save(root / "labels" / "original.npy", y)
    assert "labels/original.npy: labels must be >= 0; found -1" in _error(root)
    np.save(root / "labels" / "original.npy", y.astype(float))
    assert "labels/original.npy: expected a non-empty 1-D integer array" in _error(root)


def test_predicted_classes_out_of_range_are_refused(tmp_path):
    root = _valid(tmp_path)
    np.savez(root / "predictions" / "m0" / "new.npz", predicted=np.full(40, 7))
    assert f"m0/new.npz: 'predicted' must lie in [0, {K}); found 7..7" in _error(root)


def test_probabilities_that_are_not_distributions_are_refused(tmp_path):
    root = _valid(tmp_path)
    p = np.full((40, K), 0.5)
    np.savez(root / "predictions" / "m3" / "new.npz", probs=p)
    msg = _error(root)
    assert "m3/new.npz" in msg and "sum to 1" in msg and "expected softmax probabilities" in msg
    p = np.full((40, K), 1 / K)
    p[0] = [1.5, -0.5, 0.0]
    np.savez(root / "predictions" / "m3" / "new.npz", probs=p)
    msg = _error(root)
    assert "m3/new.npz" in msg and "[0, 1]" in msg and "logits?" in msg


def test_prediction_labels_that_differ_from_the_label_file_are_refused(tmp_path):
    root = _valid(tmp_path)
    y = np.load(root / "labels" / "new.npy")
    np.savez(root / "predictions" / "m0" / "new.npz", labels=(y + 1) % K, probs=np.full((40, K), 1 / K))
    assert "m0/new.npz: its 'labels' differ from the label file" in _error(root)


def test_a_prediction_file_without_known_arrays_is_refused(tmp_path):
    root = _valid(tmp_path)
    np.savez(root / "predictions" / "m0" / "new.npz", logits=np.zeros((40, K)))
    assert "holds ['logits']; expected 'probs' (N×K), 'predicted' (N,) or 'correct' (N,)" in _error(root)
    (root / "predictions" / "m0" / "new.npz").write_text("not a zip")
    assert "m0/new.npz: not a readable .npz" in _error(root)


def test_votes_with_k_above_n_are_refused(tmp_path):
    root = _valid(tmp_path)
    k, n = np.full(40, 2), np.full(40, 4)
    k[7] = 5
    np.savez(root / "votes" / "new.npz", k=k, n=n)
    assert (
        "votes/new.npz: k > n on 1 image(s) (first: image 7, k = 5 > n = 4); expected 0 <= k <= n"
        in _error(root)
    )


def test_votes_need_both_sets_and_both_arrays(tmp_path):
    root = _valid(tmp_path)
    np.savez(root / "votes" / "new.npz", k=np.ones(40, int))
    assert "votes/new.npz: holds ['k']; expected arrays 'k' and 'n'" in _error(root)
    (root / "votes" / "new.npz").unlink()
    assert "votes/new.npz: missing; votes must be given for both sets or neither" in _error(root)
    np.savez(root / "votes" / "new.npz", k=np.zeros(40, int), n=np.zeros(40, int))
    assert "votes/new.npz: expected n >= 1 and k >= 0 on every image; found n 0, k 0" in _error(root)


def test_every_problem_is_listed_at_once(tmp_path):
    root = _valid(tmp_path)
    (root / "predictions" / "m2" / "new.npz").unlink()
    np.savez(root / "votes" / "new.npz", k=np.full(40, 9), n=np.full(40, 4))
    msg = _error(root)
    assert msg.count("\n- ") == 2 and "m2/new.npz: missing" in msg and "k > n" in msg


def test_a_partial_folder_says_what_it_skips(tmp_path):
    labels, preds = _arrays(n_models=2)
    for m in preds:
        preds[m] = {s: {"predicted": v["probs"].argmax(1)} for s, v in preds[m].items()}
    d = folder.load_folder(export.write_folder(tmp_path / "p", labels, preds))
    ok = folder.available_analyses(d)
    assert ok["linear_fits"] == "a fit needs at least 3 models; the folder has 2"
    assert ok["matching"].startswith("no model has probabilities on both sets")
    assert ok["selection"].startswith("no votes were given")
    assert ok["mlm"].startswith("no model has probabilities") and ok["label_free"].startswith(
        "no unlabeled set"
    )
    assert d.kinds == {"m0": "predicted", "m1": "predicted"}


def test_mixed_kinds_use_probabilities_where_given(tmp_path):
    labels, preds = _arrays()
    preds["m0"]["new"] = {"correct": preds["m0"]["new"]["probs"].argmax(1) == labels["new"]}
    d = folder.load_folder(export.write_folder(tmp_path / "p", labels, preds))
    assert d.kinds["m0"] == "correct" and d.kinds["m1"] == "probs"
    assert set(analysis.matched_gaps(d, n_runs=1)["prob"].index) == {"m1", "m2", "m3"}


def test_votes_of_varying_n_run_every_selection_estimator(tmp_path):
    labels, preds = _arrays(n_orig=120, n_new=80)
    rng = np.random.default_rng(1)
    votes = {}
    for s, y in labels.items():
        n = rng.integers(2, 8, len(y))
        votes[s] = (rng.binomial(n, 0.7 if s == "original" else 0.6), n)
    d = folder.load_folder(export.write_folder(tmp_path / "v", labels, preds, votes))
    table, notes = analysis.selection_adjusted(d, n_boot=3)
    assert notes["jackknife"] is None and notes["annotators"] == [2, 3, 4, 5, 6, 7]
    assert table[["naive", "jackknife", "parametric"]].notna().all().all()
    assert ((table.parametric_low < table.parametric_high) & table.parametric.between(0, 1)).all()
    # with one image of a single vote, the jackknife is skipped and says why; the others still run
    k, n = votes["new"]
    n[0], k[0] = 1, min(k[0], 1)
    d = folder.load_folder(export.write_folder(tmp_path / "w", labels, preds, votes))
    table, notes = analysis.selection_adjusted(d, n_boot=3)
    assert "fewer than 2 votes" in notes["jackknife"] and table.jackknife.isna().all()
    assert table.naive.notna().all()


def test_votes_matrix_keeps_each_images_counts():
    k, n = np.array([0, 2, 3]), np.array([2, 3, 5])
    v = analysis._votes_matrix(k, n, 5, np.random.default_rng(0))
    assert np.nansum(v, 1).tolist() == [0, 2, 3] and (~np.isnan(v)).sum(1).tolist() == [2, 3, 5]


def test_fits_and_matching_on_the_tiny_example_are_consistent():
    d = example.tiny()
    t = analysis.accuracy_table(d)
    fits = analysis.fit_lines(d, n_boot=200, n_boot_images=100)
    lin = fits["linear"]["fit"]
    assert lin.n == 4 and np.isclose(lin.predict(t.acc_original).mean(), t.acc_new.mean())
    m = analysis.matched_gaps(d, n_runs=2)
    assert np.allclose(m["prob"].gap.to_numpy(), (t.acc_original - t.acc_new).to_numpy())


def test_label_free_estimates_match_their_definitions():
    p_val = np.array([[0.9, 0.1], [0.7, 0.3], [0.2, 0.8], [0.6, 0.4]])
    y_val = np.array([0, 1, 1, 0])  # accuracy 0.75, mean confidence 0.75
    p_test = np.array([[0.95, 0.05], [0.55, 0.45]])
    e = analysis.label_free_estimates(p_val, y_val, p_test)
    assert e["average_confidence"] == pytest.approx(0.75)
    assert e["doc"] == pytest.approx(0.75 + 0.75 - 0.75)
    assert e["softmax_0.9"] == 0.5 and e["softmax_0.8"] == 0.5
    assert 0 <= e["atc"] <= 1


def test_fingerprint_changes_with_the_folder(tmp_path):
    root = _valid(tmp_path)
    before = folder.fingerprint(root)
    np.save(root / "labels" / "extra.npy", np.zeros(3))
    assert folder.fingerprint(root) != before


def test_correctness_conversion_of_the_imagenetv2_release(tmp_path):
    from shifteval.datasets import released

    corr = released.imagenetv2_correctness()
    models = list(corr.models[:5])
    root = export.from_correctness(
        corr, tmp_path / "inv2", "imagenet-validation-original", "imagenetv2-b-33", models
    )
    d = folder.load_folder(root)
    assert d.models == tuple(sorted(models)) and d.names["new"] == "matchedfrequency"
    i = corr.models.index(d.models[0])
    assert np.isclose(d.correct["new"][0].mean(), corr.top1["imagenetv2-b-33"][i].mean())
    assert len(d.labels["original"]) == 50_000 and len(d.labels["new"]) == 10_000
    ok = folder.available_analyses(d)
    assert ok["linear_fits"] is None and ok["matching"] is not None


@given(
    st.floats(-30, 30).filter(lambda b: abs(b) > 1e-6),
    st.floats(-30, 30),
    st.floats(0, 5),
)
def test_the_word_for_an_adjustment_is_true_of_the_gap_it_leaves(before, after, noise):
    from shifteval.yourrep import report

    word = report.effect(before, after, noise)
    lo, hi = report.effect_range(before, word, noise)
    assert lo <= after <= hi, (word, lo, hi)
    if word == "reverses" and abs(before) > noise:  # a real gap's sign inside the noise is not "reversed"
        assert abs(after) > noise and (before > 0 > after or before < 0 < after)
    if word == "removes":
        assert abs(before) > noise >= abs(after)
    if abs(before) <= noise:  # no gap beyond the noise: "removes" is never true of it
        lo, hi = report.effect_range(before, "removes", noise)
        assert not lo <= after <= hi


def test_reference_lines_are_the_printed_ones_compared_only_within_their_range():
    import pandas as pd

    refs = analysis.reference_lines(n_boot=50)
    # the ImageNet line is the paper's 64 convolutional networks (Fisher vectors left out), 1.11x - 20.2
    assert refs["ImageNet"]["printed"] == {"slope": 1.11, "intercept": -20.2}
    assert refs["ImageNet"]["linear"].n == 64 and refs["ImageNet"]["range"][0] > 0.5
    # models exactly on the printed CIFAR-10 line: zero residual inside its range; one far below is not used
    x = np.array([0.85, 0.90, 0.95, 0.40])
    table = pd.DataFrame({"acc_original": x, "acc_new": 1.69 * x - 0.727})
    c = analysis.compare_with_references(table, refs).loc["CIFAR-10"]
    assert c["n_inside"] == 3 and abs(c["residual"]) < 1e-9
    assert c["farthest_outside"] == pytest.approx(100 * (refs["CIFAR-10"]["range"][0] - 0.40))
    # no model inside a line's range: no residual at all
    far = analysis.compare_with_references(pd.DataFrame({"acc_original": [0.3], "acc_new": [0.2]}), refs)
    assert far["n_inside"].sum() == 0 and far["residual"].isna().all()
