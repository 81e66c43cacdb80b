"""OOD-aware AutoEval: representation, meta-dataset, energy, detector, estimators, streams, pools, sources."""

import numpy as np
import pytest
from scipy import linalg
from scipy.special import softmax

from shifteval import autoeval as ae
from shifteval.datasets import ood
from shifteval.datasets import splits as data_splits
from shifteval.datasets.world import base_digits

DIGITS, LABELS = base_digits(16)


# --- representation (§3.2) ---------------------------------------------------------------------------


def test_frechet_distance_matches_scipy_and_is_safe_for_singular_covariances():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(400, 12)), rng.normal(size=(300, 12)) * 1.3 + 0.2
    c1, c2 = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    ref = np.sum((a.mean(0) - b.mean(0)) ** 2) + np.trace(c1 + c2 - 2 * linalg.sqrtm(c1 @ c2).real)
    assert ae.frechet_distance(a.mean(0), c1, b.mean(0), c2) == pytest.approx(ref, rel=1e-8)
    assert ae.frechet_distance(a.mean(0), c1, a.mean(0), c1) == pytest.approx(0, abs=1e-9)
    assert ae.frechet_distance(b.mean(0), c2, a.mean(0), c1) == pytest.approx(ref, rel=1e-8)  # symmetric
    known = ae.Reference(b.mean(0), c2, np.zeros(1)).sqrt_cov  # a reference's square root, computed once
    assert known @ known == pytest.approx(c2, abs=1e-12)
    assert ae.frechet_distance(b.mean(0), c2, a.mean(0), c1, sqrt_cov1=known) == pytest.approx(ref, rel=1e-8)
    low = rng.normal(size=(5, 12))  # 5 samples in 12 dimensions: rank-deficient covariance
    c_low = np.cov(low, rowvar=False)
    fd = ae.frechet_distance(low.mean(0), c_low, b.mean(0), c2)
    assert np.isfinite(fd) and fd > 0
    assert ae.frechet_distance(b.mean(0), c2, low.mean(0), c_low) == pytest.approx(fd, rel=1e-6)


def test_representation_layout_is_mean_then_variance_then_fd():
    f = np.array([[0.0, 1.0], [2.0, 5.0], [4.0, 3.0]])
    ref = ae.Reference(mean=np.array([1.0, 1.0]), cov=np.eye(2), energies=np.zeros(3))
    h = ae.representation(f, ref)
    assert h.shape == (5,)
    assert h[:2] == pytest.approx([2.0, 3.0])  # means
    assert h[2:4] == pytest.approx([8 / 3, 8 / 3])  # population variances, not standard deviations
    assert h[4] == pytest.approx(
        ae.frechet_distance([2.0, 3.0], np.cov(f, rowvar=False), [1.0, 1.0], np.eye(2))
    )
    with pytest.raises(ValueError, match="at least two"):
        ae.representation(np.zeros((1, 4)), ref)


# --- meta-dataset (§3.3) -----------------------------------------------------------------------------


def _only(transform):
    """A generator whose first draws make :func:`transform_set` (p = ½) use ``transform`` alone."""
    for s in range(5000):
        draws = np.random.default_rng(s).random(len(ae.TRANSFORMS))
        if tuple(t for t, d in zip(ae.TRANSFORMS, draws, strict=True) if d < 0.5) == (transform,):
            return s
    raise AssertionError(transform)


def test_each_of_the_six_transformations_does_what_it_says():
    x0 = np.clip(DIGITS[:40] * 0.8 + 0.1, 0, 1)  # away from 0 and 1, so clipping rarely bites
    out = {}
    for t in ae.TRANSFORMS:
        x, used = ae.transform_set(x0, np.random.default_rng(_only(t)))
        assert used == (t,)
        assert x.shape == x0.shape and x.dtype == np.float32 and x.min() >= 0 and x.max() <= 1
        out[t] = x
    m0, m = x0.mean(axis=(1, 2)), out["contrast"].mean(axis=(1, 2))
    ratio = out["contrast"].std(axis=(1, 2)) / x0.std(axis=(1, 2))
    assert np.allclose(m, m0, atol=0.03) and np.ptp(ratio) < 0.05 and abs(ratio.mean() - 1) > 0.01
    shift = out["brightness"] - x0
    inside = (out["brightness"] > 0) & (out["brightness"] < 1)
    assert np.ptp(shift[inside]) < 1e-5 and abs(shift[inside].mean()) > 1e-3  # one constant offset
    assert len(np.unique(out["gray_levels"])) <= 6
    flipped = np.all(np.isclose(out["inversion"], 1 - x0, atol=1e-6), axis=(1, 2))
    same = np.all(np.isclose(out["inversion"], x0, atol=1e-6), axis=(1, 2))
    assert np.all(flipped | same) and flipped.any()
    assert not np.allclose(out["affine"], x0, atol=1e-3)
    assert abs(out["affine"].sum() / x0.sum() - 1) < 0.4  # moved, not erased

    def high(x):
        return np.abs(x - __import__("scipy").ndimage.gaussian_filter(x, (0, 1, 1))).mean()

    assert high(out["sharpen"]) > 1.2 * high(x0)


def test_transform_set_identity_without_transformations():
    x, used = ae.transform_set(DIGITS[:10], np.random.default_rng(0), p=0.0)
    assert used == () and np.allclose(x, DIGITS[:10])
    x, used = ae.transform_set(DIGITS[:10], np.random.default_rng(1), p=1.0)
    assert used == ae.TRANSFORMS and not np.allclose(x, DIGITS[:10])


def test_meta_sets_keep_each_images_label_and_have_their_own_streams():
    images = DIGITS[:300]
    labels = LABELS[:300]
    sets = list(ae.meta_dataset(images, labels, n_sets=6, set_size=50, seed=3))
    again = list(ae.meta_dataset(images, labels, n_sets=6, set_size=50, seed=3))
    for i, ((x, y, used), (x2, y2, used2)) in enumerate(zip(sets, again, strict=True)):
        assert np.array_equal(x, x2) and np.array_equal(y, y2) and used == used2
        idx = ae.stream(3, "meta_train", i).choice(300, 50, replace=False)  # the set's own draw
        assert np.array_equal(y, labels[idx])  # every image keeps its own label
    assert len({tuple(y[:10]) for _, y, _ in sets}) == 6
    val = list(ae.meta_dataset(images, labels, n_sets=6, set_size=50, seed=3, purpose="meta_val"))
    assert all(not np.array_equal(a[1], b[1]) for a, b in zip(sets, val, strict=True))


# --- streams -------------------------------------------------------------------------------------------


def test_every_purpose_has_its_own_stream():
    assert len(set(ae.PURPOSES.values())) == len(ae.PURPOSES)
    draws = {p: ae.stream(0, p).random(4).tolist() for p in ae.PURPOSES}
    assert len({tuple(d) for d in draws.values()}) == len(ae.PURPOSES)
    assert ae.stream(0, "ood_source", "letters").random() != ae.stream(0, "ood_source", "textures").random()
    assert ae.stream(0, "split").random() != ae.stream(1, "split").random()
    assert ae.stream_seed(0, "classifier", "cnn") != ae.stream_seed(0, "detector")
    with pytest.raises(ValueError, match="unknown random-stream purpose"):
        ae.stream(0, "everything")


# --- energy and the detector (§3.4-3.5) ------------------------------------------------------------------


def test_outputs_do_not_depend_on_the_batch_and_keep_each_images_rotation():
    """Prediction in batches of nets.batch_size (256 images of 28×28) gives the outputs of one-image batches."""
    import torch

    from shifteval.nets import batch_size, paper_cnn, predict_torch

    torch.manual_seed(0)
    net = ae.feature_net(width=8).eval()
    x = np.random.default_rng(0).random((600, 28, 28)).astype(np.float32)
    assert batch_size(28) == 256
    default = ae.compute_outputs(net, x, rotation=True, detector=net)
    for batch in (1, 7, 1024):
        other = ae.compute_outputs(net, x, batch=batch, rotation=True, detector=net)
        np.testing.assert_allclose(other.logits, default.logits, rtol=0, atol=1e-5)
        np.testing.assert_allclose(other.features, default.features, rtol=0, atol=1e-5)
        np.testing.assert_array_equal(
            other.rotation_correct, default.rotation_correct
        )  # image i: i mod 4 turns
    cnn = paper_cnn(28).eval()
    np.testing.assert_allclose(predict_torch(cnn, x), predict_torch(cnn, x, batch=5), rtol=0, atol=1e-6)
    for bad in (0, -3):
        with pytest.raises(ValueError, match="batch must be a positive"):
            ae.compute_outputs(net, x, batch=bad)
        with pytest.raises(ValueError, match="batch must be a positive"):
            predict_torch(cnn, x, batch=bad)


def test_energy_and_threshold():
    logits = np.array([[10.0, 0.0, 0.0], [0.1, 0.0, 0.2]])
    e = ae.energy(logits, temperature=2.0)
    assert e == pytest.approx(-2.0 * np.log(np.exp(logits / 2).sum(1)))
    assert e[0] < e[1]
    energies = np.arange(1000.0)
    assert ae.energy_threshold(energies, 99.5) == pytest.approx(np.percentile(energies, 99.5))
    assert ae.energy_threshold(energies, 100) == 999
    for bad in (0, -1, 100.5):
        with pytest.raises(ValueError, match=r"percentile must be in \(0, 100\]"):
            ae.energy_threshold(energies, bad)
    with pytest.raises(ValueError, match="temperature"):
        ae.energy(logits, 0)


def test_outlier_exposure_detector_detects_unseen_outliers_and_leaves_the_classifier_alone():
    aux = ood.auxiliary_outliers(1200, side=16, rng=1)
    fit_aux, held_out = aux[:1000], aux[1000:]
    model = ae.train_feature_net(DIGITS[:800], LABELS[:800], epochs=3, seed=0, width=8)
    before = [p.detach().clone() for p in model.parameters()]
    detector = ae.train_detector(model, DIGITS[:800], LABELS[:800], fit_aux, epochs=6, lr=0.05, seed=0)
    assert all(
        np.array_equal(a.numpy(), b.detach().numpy()) for a, b in zip(before, model.parameters(), strict=True)
    )
    test_digits = DIGITS[800:1100]

    def auroc(net, outliers):
        energy = lambda x: ae.energy(ae.compute_outputs(net, x).logits)  # noqa: E731
        return ae.auroc(energy(test_digits), energy(outliers))

    after = auroc(detector, held_out)
    assert after > 0.9  # absolute: held-out outliers of the auxiliary kinds are told from held-out digits
    assert 1 - after < 0.5 * (1 - auroc(model, held_out))  # and at least half the classifier's ranking error
    out = ae.compute_outputs(model, held_out, detector=detector)
    assert np.allclose(out.energy, ae.energy(ae.compute_outputs(detector, held_out).logits))
    assert np.allclose(out.energies(), out.energy) and out.subset(np.arange(5)).energy.shape == (5,)
    with pytest.raises(ValueError, match="m_in < m_out"):
        ae.train_detector(model, DIGITS[:64], LABELS[:64], fit_aux, epochs=1, margins=(-1.0, -5.0))


def test_detector_step_is_one_forward_pass_of_the_concatenated_batch(monkeypatch):
    """As the reference: each step forwards 128 training images and 256 outliers together."""
    model = ae.train_feature_net(DIGITS[:256], LABELS[:256], epochs=1, seed=0, width=4)
    calls = []
    original = type(model).forward

    def spy(self, x):
        calls.append(len(x))
        return original(self, x)

    monkeypatch.setattr(type(model), "forward", spy)
    aux = ood.auxiliary_outliers(600, rng=0)
    ae.train_detector(model, DIGITS[:256], LABELS[:256], aux, epochs=1, margins=(-5.0, -1.0))
    assert calls == [128 + 256, 128 + 256]


# --- estimators --------------------------------------------------------------------------------------------


def _outputs(n, k=10, dim=6, correct_share=1.0, seed=0, scale=5.0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    hit = rng.random(n) < correct_share
    logits[np.arange(n), np.where(hit, labels, (labels + 1) % k)] += scale
    feats = rng.normal(size=(n, dim)) + hit[:, None]
    return ae.Outputs(logits, feats, rng.random(n)), labels


def _fitted(**kw):
    meta = [_outputs(200, correct_share=s, seed=i) for i, s in enumerate(np.linspace(0.3, 1.0, 30))]
    train, _ = _outputs(500, seed=99)
    val, val_labels = _outputs(300, correct_share=0.8, seed=98)
    est = ae.fit([o for o, _ in meta], [y for _, y in meta], train, val, val_labels, hidden=(16, 8), **kw)
    return est, meta, train, val, val_labels


def test_baseline_estimates_against_hand_computed_values():
    est, meta, _, val, val_labels = _fitted()
    # hand-computed DoC reference and rotation line
    conf_val = softmax(val.logits, axis=1).max(1)
    assert est.val_accuracy == pytest.approx(np.mean(val.logits.argmax(1) == val_labels))
    assert est.val_confidence == pytest.approx(conf_val.mean())
    rot = np.array([o.rotation_correct.mean() for o, _ in meta])
    acc = np.array([np.mean(o.logits.argmax(1) == y) for o, y in meta])
    assert est.rotation_fit == pytest.approx(tuple(np.polyfit(rot, acc, 1)))
    # two images: confidences 0.5 and ≈1
    test = ae.Outputs(
        np.array([[0.0, 0.0, -50.0], [30.0, 0.0, 0.0]]),
        np.array([[0.0] * 6, [1.0] * 6]),
        np.array([1.0, 0.0]),
    )
    est.val_accuracy, est.val_confidence, est.rotation_fit = 0.9, 0.8, (0.5, 0.2)
    est.atc_temperature, est.atc_threshold = 1.0, -0.1
    e = est.estimates(test.subset([0, 1, 1, 0]))
    assert e["softmax_0.8"] == 0.5 and e["softmax_0.9"] == 0.5
    assert e["average_confidence"] == pytest.approx(0.75)
    assert e["doc"] == pytest.approx(0.75 + 0.9 - 0.8)
    assert e["atc"] == 0.5  # negative entropies: −log 2 ≈ −0.69 (below −0.1) and ≈ 0 (above)
    assert e["rotation"] == pytest.approx(0.5 * 0.5 + 0.2)


def test_atc_is_garg_et_al_negative_entropy_after_temperature_scaling():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(4000, 5)) * 2
    labels = np.array([rng.choice(5, p=p) for p in softmax(z, axis=1)])
    assert ae.fit_temperature(3.0 * z, labels) == pytest.approx(3.0, rel=0.08)  # recovers the true scale
    est, _, _, val, val_labels = _fitted()
    t = ae.fit_temperature(val.logits, val_labels)
    assert est.atc_temperature == pytest.approx(t)
    scores = ae.negative_entropy(val.logits, t)
    assert np.mean(scores < est.atc_threshold) == pytest.approx(1 - est.val_accuracy, abs=1 / 300)
    p = softmax(val.logits / t, axis=1)
    assert scores == pytest.approx((p * np.log(p)).sum(1))
    assert ae.atc_threshold([0.1, 0.2, 0.3, 0.4], [False, True, True, True]) == pytest.approx(0.175)


def test_estimates_combine_id_share_and_autoeval_with_the_detectors_energies():
    est, *_ = _fitted()
    test, _ = _outputs(300, correct_share=0.7, seed=7)
    est.ref.energies = np.linspace(-10, -5, 500)
    test.energy = np.where(np.arange(300) < 60, 0.0, -8.0)  # the detector flags the first 60 images
    e = est.estimates(test, 99.5)
    assert set(e) == set(ae.METHODS)
    assert e["autoeval_energy_ood"] == pytest.approx(0.8 * est.predict_mlp(test.subset(np.arange(60, 300))))
    with pytest.raises(ValueError, match="empty"):
        est.estimates(test.subset(np.zeros(300, bool)))


def test_regularisation_is_the_one_with_the_lowest_validation_error():
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    val = [_outputs(200, correct_share=s, seed=100 + i) for i, s in enumerate(np.linspace(0.35, 0.95, 8))]
    alphas = (1e-3, 30.0, 1e4)
    est, meta, train, *_ = _fitted(alphas=alphas, val_meta=([o for o, _ in val], [y for _, y in val]))
    ref = ae.reference(train)
    reps, acc = ae.meta_targets([o for o, _ in meta], [y for _, y in meta], ref)
    v_reps, v_acc = ae.meta_targets([o for o, _ in val], [y for _, y in val], ref)
    scores = {
        a: ae.rmse(
            make_pipeline(
                StandardScaler(),
                MLPRegressor(hidden_layer_sizes=(16, 8), alpha=a, max_iter=3000, random_state=0),
            )
            .fit(reps, acc)
            .predict(v_reps),
            v_acc,
        )
        for a in alphas
    }
    assert len(set(scores.values())) == 3 and est.mlp_alpha == min(scores, key=scores.get)
    assert _fitted(alphas=(1e4, 1e-3))[0].mlp_alpha == 1e4  # without validation meta-sets: the first


# --- protocol --------------------------------------------------------------------------------


def test_mix_counts_every_ood_image_as_an_error():
    id_out, id_labels = _outputs(500, correct_share=1.0, scale=50.0)
    ood_out, _ = _outputs(300, seed=1)
    out, truth, is_ood = ae.mix(id_out, id_labels, ood_out, 200, 0.1, np.random.default_rng(0))
    assert len(out.logits) == 200 and is_ood.sum() == 20 and truth == pytest.approx(0.9)
    with pytest.raises(ValueError, match="needs more images"):
        ae.mix(id_out, id_labels, ood_out, 2000, 0.1, np.random.default_rng(0))


def test_evaluate_defaults_to_labeled_sources_as_id_and_the_rest_as_ood():
    est, *_ = _fitted()
    a, ya = _outputs(300, seed=11)
    b, _ = _outputs(300, seed=12)
    outs = {"digits": a, "foreign": b}
    frame = ae.evaluate(
        est, outs, {"digits": ya}, outs, set_size=100, ood_share=0.1, percentile=99.5, repeats=2
    )
    assert list(frame["id"]) == ["digits"] * 2 and list(frame["ood"]) == ["foreign"] * 2
    assert (
        frame["truth"].iloc[0] != frame["truth"].iloc[1]
        or frame["autoeval"].iloc[0] != frame["autoeval"].iloc[1]
    )
    with pytest.raises(ValueError, match="no outputs or labels"):
        ae.evaluate(
            est,
            outs,
            {"digits": ya},
            outs,
            set_size=100,
            ood_share=0.1,
            percentile=99.5,
            repeats=1,
            ids=["nothing"],
        )


def test_held_out_pools_share_no_base_digit_with_the_classifiers_images():
    data = data_splits.load_data({"n_train": 1000, "n_v1": 400, "n_pool": 3000, "per_class": 40})
    pools = ae.training_pools(data, 0.3, seed=0)
    assert pools.overlap == {"meta": 0, "validation": 0}
    w = data.world
    base = w.examples["base_id"].to_numpy()[data.train_index]
    images = data.splits["train"][0]
    lookup = {images[i].tobytes(): base[i] for i in range(len(images))}
    fit_bases = {lookup[x.tobytes()] for x in pools.fit[0]}
    for pool in (pools.meta, pools.val):  # recounted from the images themselves
        assert not {lookup[x.tobytes()] for x in pool[0]} & fit_bases
    assert len(pools.fit[0]) + len(pools.meta[0]) + len(pools.val[0]) == len(images)
    assert 0.25 < (len(pools.meta[0]) + len(pools.val[0])) / len(images) < 0.35


def test_meta_validation_is_the_rmse_of_both_regressors_on_the_validation_meta_sets():
    from types import SimpleNamespace

    est, meta, *_ = _fitted()
    val = [_outputs(200, correct_share=s, seed=200 + i) for i, s in enumerate(np.linspace(0.4, 0.9, 5))]
    bb = SimpleNamespace(
        meta_train=[o for o, _ in meta], meta_train_labels=[y for _, y in meta],
        meta_val=[o for o, _ in val], meta_val_labels=[y for _, y in val],
    )  # fmt: skip
    summary, regression = ae.meta_validation(est, bb)
    truth = np.array([float((o.logits.argmax(1) == y).mean()) for o, y in val])
    mlp = np.array([est.predict_mlp(o) for o, _ in val])
    lin = np.array([est.predict_linear(o) for o, _ in val])
    assert summary["mlp"] == pytest.approx(100 * np.sqrt(np.mean((mlp - truth) ** 2)))
    assert summary["linear_fd"] == pytest.approx(100 * np.sqrt(np.mean((lin - truth) ** 2)))
    assert summary["accuracy_range"] == pytest.approx([0.3, 1.0], abs=0.08)
    assert np.array_equal(regression["acc_val"], truth) and len(regression["fd_train"]) == len(meta)
    assert regression["fd_val"] == pytest.approx([ae.representation(o.features, est.ref)[-1] for o, _ in val])


def _sweep_backbone(n_meta=12):
    from types import SimpleNamespace

    meta = [_outputs(200, correct_share=s, seed=i) for i, s in enumerate(np.linspace(0.3, 1.0, n_meta))]
    val = [_outputs(200, correct_share=s, seed=200 + i) for i, s in enumerate(np.linspace(0.4, 0.9, 5))]
    (train, _), (val_pool, val_labels) = _outputs(500, seed=99), _outputs(300, correct_share=0.8, seed=98)
    bb = SimpleNamespace(
        meta_train=[o for o, _ in meta], meta_train_labels=[y for _, y in meta], train=train,
        meta_val=[o for o, _ in val], meta_val_labels=[y for _, y in val], val_pool=val_pool,
    )  # fmt: skip
    return bb, val_labels


def test_meta_set_sweep_fits_on_the_first_n_meta_sets_as_prepare_does():
    bb, val_labels = _sweep_backbone()
    options = dict(hidden=(16, 8), alphas=(1e-3, 30.0))
    sweep = ae.meta_set_sweep(bb, val_labels, [12, 4, 4, np.int64(8)], seed=3, **options)
    assert sweep.index.tolist() == [4, 8, 12] and sweep.index.name == "meta_sets"  # ascending, once each
    assert sweep.columns.tolist() == ["mlp", "linear_fd", "mlp_alpha"]
    for n in (4, 12):  # each row: fit on the first n meta-sets, the chapter's seed stream and penalty choice
        est = ae.fit(bb.meta_train[:n], bb.meta_train_labels[:n], bb.train, bb.val_pool, val_labels,
                     val_meta=(bb.meta_val, bb.meta_val_labels), seed=ae.stream_seed(3, "regressor"),
                     **options)  # fmt: skip
        summary, _ = ae.meta_validation(est, bb)
        assert sweep.loc[n].to_dict() == pytest.approx({k: summary[k] for k in sweep.columns})
    assert sweep.loc[4, "linear_fd"] != sweep.loc[12, "linear_fd"]  # the count matters


def test_meta_set_sweep_compares_each_count_with_a_reference_on_the_same_validation_meta_sets():
    bb, val_labels = _sweep_backbone()
    options = dict(hidden=(16, 8), alphas=(1e-3,), seed=3)
    rng = np.random.default_rng(0)
    sweep = ae.meta_set_sweep(bb, val_labels, [4, 12], reference=12, rng=rng, **options)
    plain = ae.meta_set_sweep(bb, val_labels, [4, 12], **options)
    assert sweep[plain.columns].equals(plain)  # the comparison adds columns and changes nothing else
    assert sweep.loc[12, ["mlp_gap", "mlp_gap_lo", "mlp_gap_hi"]].tolist() == [0.0, 0.0, 0.0]
    gap, lo, hi = sweep.loc[4, ["mlp_gap", "mlp_gap_lo", "mlp_gap_hi"]]
    assert gap == pytest.approx(sweep.loc[4, "mlp"] - sweep.loc[12, "mlp"]) and lo <= gap <= hi
    with pytest.raises(ValueError, match="reference count 8 is not one of the counts"):
        ae.meta_set_sweep(bb, val_labels, [4, 12], reference=8)


def test_rmse_difference_is_paired_over_the_sets():
    truth = np.linspace(0.5, 0.9, 40)
    noise = np.random.default_rng(1).normal(0, 0.03, 40)
    a, b = truth + noise, truth + noise + 0.02  # b errs like a, plus 2 points: a paired comparison is sharp
    d, lo, hi = ae.rmse_difference(a, b, truth, rng=np.random.default_rng(0))
    assert d == pytest.approx(ae.rmse(a, truth) - ae.rmse(b, truth))
    assert lo <= d <= hi < 0
    same = ae.rmse_difference(a, a, truth, rng=np.random.default_rng(0))
    assert same == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="same n >= 2 sets"):
        ae.rmse_difference(a, b[:-1], truth)
    with pytest.raises(ValueError, match="n_boot >= 100"):
        ae.rmse_difference(a, b, truth, n_boot=10)


def test_doc_error_is_the_difference_of_the_two_calibration_gaps_with_a_clustered_standard_error():
    est, _, _, val, val_labels = _fitted()
    test, test_labels = _outputs(300, correct_share=0.9, seed=7)
    e = ae.doc_error(test, test_labels, val, val_labels)
    truth = float(np.mean(test.logits.argmax(1) == test_labels))
    assert e["error"] == pytest.approx(
        100 * (est.estimates(test)["doc"] - truth)
    )  # DoC as the estimator has it
    assert e["error"] == pytest.approx(e["test_gap"] - e["val_gap"])
    assert e["test_accuracy"] == pytest.approx(100 * truth) and e["clusters"] == [300, len(val_labels)]
    # renders of one digit: copies of every image are no new evidence, so the clustered error does not shrink
    twice = ae.Outputs.concatenate([test, test])
    groups = np.r_[np.arange(300), np.arange(300)]
    doubled = ae.doc_error(twice, np.r_[test_labels, test_labels], val, val_labels, test_groups=groups)
    naive = ae.doc_error(twice, np.r_[test_labels, test_labels], val, val_labels)
    assert doubled["error"] == pytest.approx(e["error"]) and naive["se"] < doubled["se"]
    with pytest.raises(ValueError, match="at least two clusters"):
        ae.doc_error(test, test_labels, val, val_labels, test_groups=np.zeros(300))


def test_source_groups_are_the_base_digits_of_the_world_and_distinct_images_of_real_data():
    data = data_splits.load_data({"n_train": 1000, "n_v1": 400, "n_pool": 3000, "per_class": 40})
    groups = ae.source_groups(data, "v1+fog@3")
    w = data.world
    assert np.array_equal(groups, w.examples["base_id"].to_numpy()[w.split_index("v1")])
    assert len(np.unique(groups)) < len(groups)  # several renders of one digit
    pools = ae.training_pools(data, 0.3, seed=0)
    assert {k: len(g) for k, g in pools.groups.items()} == {
        "fit": len(pools.fit[0]),
        "meta": len(pools.meta[0]),
        "val": len(pools.val[0]),
    }
    assert not set(pools.groups["val"]) & set(pools.groups["fit"])
    x = np.zeros((4, 8, 8), np.float32)
    x[1] += 1
    real = data_splits.Data({"test": (x, np.arange(4))}, "toy")
    assert ae.source_groups(real, "test").tolist() == [0, 1, 0, 0]
    with pytest.raises(ValueError, match="no split 'v2'"):
        ae.source_groups(real, "v2")


@pytest.mark.parametrize("counts", [[0, 4], [4, 13], [1], [2.5], []])
def test_meta_set_sweep_refuses_counts_it_cannot_fit(counts):
    bb, val_labels = _sweep_backbone()
    with pytest.raises(ValueError, match=r"counts must be integers in 2\.\.12 .*extend_meta_sets draws more"):
        ae.meta_set_sweep(bb, val_labels, counts)
    bb.val_pool = None
    with pytest.raises(ValueError, match="no val_pool"):
        ae.meta_set_sweep(bb, val_labels, [4])


def test_extend_meta_sets_adds_the_sets_prepare_backbone_would_have_drawn():
    fit_set, meta, val = ((DIGITS[a : a + 40], LABELS[a : a + 40]) for a in (0, 40, 80))
    bb = ae.prepare_backbone("cnn", *fit_set, meta, val, epochs=1, n_sets=3, n_val_sets=2, set_size=10, seed=5,
                             progress=False)  # fmt: skip
    more, seconds = ae.extend_meta_sets(bb, meta, 6, seed=5)
    assert len(more.meta_train) == len(more.meta_train_labels) == 6 and len(bb.meta_train) == 3
    assert all(a is b for a, b in zip(more.meta_train[:3], bb.meta_train, strict=True))  # kept, not redrawn
    drawn = list(ae.meta_dataset(*meta, n_sets=6, set_size=10, seed=5))  # all six at once
    rotated, _ = ae.extend_meta_sets(bb, meta, 6, seed=5, rotation=True)
    for i in range(3, 6):
        assert np.array_equal(more.meta_train_labels[i], drawn[i][1])
        expected = ae.compute_outputs(bb.model, drawn[i][0], rotation=True)
        np.testing.assert_allclose(more.meta_train[i].logits, expected.logits, rtol=0, atol=1e-6)
        # the rotation head's answers only when asked for; logits and features the same either way
        assert more.meta_train[i].rotation_correct is None
        assert np.array_equal(rotated.meta_train[i].rotation_correct, expected.rotation_correct)
        assert np.array_equal(rotated.meta_train[i].features, more.meta_train[i].features)
    assert np.isfinite(seconds) and seconds > 0 and more.meta_val is bb.meta_val
    same, none = ae.extend_meta_sets(bb, meta, 3)
    assert same is bb and np.isnan(none)
    with pytest.raises(ValueError, match="n_sets must be at least 2"):
        ae.extend_meta_sets(bb, meta, 1)
    with pytest.raises(ValueError, match="start must be in 0..6"):
        list(ae.meta_dataset(*meta, n_sets=6, set_size=10, start=7))


def test_evaluation_sources_draw_each_source_from_its_own_stream_and_refuse_unknown_ones():
    splits = {"v1": (DIGITS[:20], LABELS[:20])}
    id_data, ood_data = ae.evaluation_sources(
        splits, ["v1", "v1+fog@3"], ["letters", "textures"], 6, 16, seed=3
    )
    assert list(id_data) == ["v1", "v1+fog@3"] and list(ood_data) == ["letters", "textures"]
    assert np.array_equal(id_data["v1+fog@3"][0], ae.id_source(splits, "v1+fog@3", 3)[0])
    assert np.array_equal(
        ood_data["letters"], ood.ood_images("letters", 6, 16, ae.stream(3, "ood_source", "letters"))
    )
    alone = ae.evaluation_sources(splits, ["v1"], ["textures"], 6, 16, seed=3)[1]
    assert np.array_equal(alone["textures"], ood_data["textures"])  # independent of the other sources
    with pytest.raises(ValueError, match=r"unknown OOD source\(s\) \['svhn'\]; valid: natural_patches"):
        ae.evaluation_sources(splits, ["v1"], ["letters", "svhn"], 6, 16)
    with pytest.raises(ValueError, match="no split 'v2'"):
        ae.evaluation_sources(splits, ["v2"], ["letters"], 6, 16)


# --- OOD sources --------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ood.OOD_SOURCES)
def test_ood_sources(source):
    x = ood.ood_images(source, 20, side=16, rng=0)
    assert (
        x.shape == (20, 16, 16) and x.dtype == np.float32 and x.min() >= 0 and x.max() <= 1 and x.std() > 0.05
    )
    assert np.array_equal(x, ood.ood_images(source, 20, side=16, rng=0))


def test_auxiliary_outliers_use_no_test_sources_generator_or_material(monkeypatch):
    aux = ood.auxiliary_outliers(60, side=16, rng=0)
    assert aux.shape == (60, 16, 16) and aux.dtype == np.float32 and aux.min() >= 0 and aux.max() <= 1
    assert np.array_equal(aux, ood.auxiliary_outliers(60, side=16, rng=0))
    test_gens = {ood.GENERATORS[s] for s in ood.OOD_SOURCES}
    aux_gens = {v for k, v in ood.GENERATORS.items() if k.startswith("aux:")}
    assert not {g for g, _ in test_gens} & {g for g, _ in aux_gens}
    assert not {m for _, m in test_gens} & {m for _, m in aux_gens}

    def forbidden(*args, **kwargs):
        raise AssertionError("an auxiliary outlier used a test source's generator")

    for name in ("_patches", "_render_glyphs", "_textures"):  # would catch a shared generator
        monkeypatch.setattr(ood, name, forbidden)
    monkeypatch.setattr("sklearn.datasets.load_sample_images", forbidden)
    assert np.array_equal(ood.auxiliary_outliers(60, side=16, rng=0), aux)
    with pytest.raises(AssertionError, match="test source's generator"):
        ood.ood_images("letters", 2)
    with pytest.raises(ValueError, match="positive"):
        ood.auxiliary_outliers(0)


def test_bad_input():
    with pytest.raises(ValueError, match="unknown OOD source"):
        ood.ood_images("svhn", 10)
    with pytest.raises(ValueError, match="empty"):
        ae.compute_outputs(None, np.zeros((0, 16, 16)))
    with pytest.raises(ValueError, match=r"\(N, S, S\)"):
        ae.compute_outputs(None, np.zeros((4, 16, 12)))
    with pytest.raises(ValueError, match=r"\(N, S, S\)"):
        list(ae.meta_dataset(np.zeros((4, 3, 16, 16)), np.zeros(4), 2, 2))
    with pytest.raises(ValueError, match="set_size"):
        list(ae.meta_dataset(DIGITS[:10], LABELS[:10], 2, 20))
    with pytest.raises(ValueError, match="holdout_fraction"):
        ae.training_pools(data_splits.Data({"train": (DIGITS, LABELS)}, "x"), 1.5)


def test_feature_net_trains_and_exposes_features_and_rotation():
    model = ae.train_feature_net(DIGITS[:256], LABELS[:256], epochs=1, seed=0)
    out = ae.compute_outputs(model, DIGITS[256:300], rotation=True)
    assert out.logits.shape == (44, 10) and out.features.shape == (44, 64)
    assert out.rotation_correct.shape == (44,) and np.all(
        (out.rotation_correct >= 0) & (out.rotation_correct <= 1)
    )


# --- perturbed ID sources made for their data; exclusions per source; the threshold remedy ----------


def test_a_severity_table_made_for_other_data_is_refused():
    x = DIGITS[:6].astype(np.float32)
    splits = {"test": (x, LABELS[:6])}
    with pytest.raises(ValueError, match="made for the replication world, not for mnist"):
        ae.id_source(splits, "test+fog@3", dataset="mnist")
    ae.id_source(splits, "test", dataset="mnist")  # an unperturbed source needs no table
    table = ae.SeverityTable("mnist", {"fog": [0.1] * 10}, "given")
    images, _ = ae.id_source(splits, "test+fog@3", severity=table, dataset="mnist")
    assert images.shape == x.shape and not np.array_equal(images, x)
    with pytest.raises(ValueError, match="made for the mnist, not for replication world"):
        ae.evaluation_sources(splits, ["test+fog@3"], [], 4, 16, severity=table)


@pytest.mark.slow  # trains a small network
def test_calibrated_levels_reach_their_targets_on_the_calibration_images():
    """Level ℓ's strength is where the calibration model keeps 1 − 0.05 ℓ of its clean accuracy."""
    x, y = DIGITS[::2].astype(np.float32), LABELS[::2]
    net = ae.train_feature_net(x, y, epochs=4, batch_size=64, width=8, seed=1)
    table = ae.calibrate_table(net, x, y, ["gaussian_noise", "motion_blur"], "world", points=16)
    assert table.dataset == "world" and table.clean_accuracy > 0.3  # chance is 0.1
    for name in ("gaussian_noise", "motion_blur"):
        strengths, reached = np.array(table.strengths[name]), np.array(table.accuracy[name])
        assert np.all(np.diff(strengths) >= 0)  # stronger at every level
        targets = table.clean_accuracy * (1 - ae.shifts.STEP * np.arange(1, 11))
        assert np.abs(reached[:3] - targets[:3]).max() < 0.08  # levels 1-3 on target, within grid error


def test_severity_table_is_the_fixed_one_only_for_the_world():
    world = data_splits.Data({}, "a world")
    assert ae.severity_table(world, (DIGITS, LABELS), (DIGITS, LABELS), ["fog"]) is ae.WORLD_TABLE
    mnist = data_splits.Data({}, "idx files", dataset="mnist")
    x = DIGITS.astype(np.float32)
    table = ae.severity_table(mnist, (x, LABELS), (x, LABELS), ["fog"], epochs=1, n_train=200, n_images=100)
    assert table.dataset == "mnist" and set(table.strengths) == {"fog"} and 0 < table.clean_accuracy <= 1


def test_exclusion_and_by_source_against_hand_counts():
    est, *_ = _fitted()
    out, labels = _outputs(200, correct_share=0.6, seed=5, scale=1.5)  # weaker logits: higher energies
    tau = ae.energy_threshold(est.ref.energies, 99.5)
    e = out.energies()
    correct = out.logits.argmax(1) == labels
    got = ae.exclusion(est, out, labels, 99.5)
    assert 0 < got["excluded_share"] < 1
    assert got["excluded_share"] == pytest.approx(np.mean(e > tau))
    assert got["excluded_accuracy"] == pytest.approx(correct[e > tau].mean())
    ood_out, _ = _outputs(100, seed=6, scale=0.0)
    f = ae.evaluate(est, {"a": out}, {"a": labels}, {"n": ood_out}, set_size=100, ood_share=0.1, percentile=99.5,
                    repeats=3)  # fmt: skip
    t = ae.by_source(f, est, {"a": out}, {"a": labels}, 99.5, names={"a": "clean"})
    assert list(t.index) == ["clean"]
    assert t.loc["clean", "autoeval"] == pytest.approx(ae.rmse(f["autoeval"], f["truth"]))
    assert t.loc["clean", "ood_aware_bias"] == pytest.approx(
        100 * (f["autoeval_energy_ood"] - f["truth"]).mean()
    )


def test_a_threshold_read_off_higher_energies_excludes_no_more():
    est, *_ = _fitted()
    out, labels = _outputs(300, correct_share=0.7, seed=7)
    high = ae.threshold_from(est, est.ref.energies + 3.0)
    assert high.is_id(out).sum() >= est.is_id(out).sum()
    assert high.predict_mlp(out) == est.predict_mlp(out)  # only the threshold changes
    assert (
        ae.exclusion(high, out, labels, 99.5)["excluded_share"]
        <= ae.exclusion(est, out, labels, 99.5)["excluded_share"]
    )
