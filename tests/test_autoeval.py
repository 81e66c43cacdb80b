"""OOD-aware AutoEval: the Fréchet distance, energy, the meta-dataset, the estimators, OOD sources, bad input."""

import numpy as np
import pytest
from scipy import linalg

from shifteval import autoeval as ae
from shifteval.datasets.world import base_digits

DIGITS, LABELS = base_digits(16)


def test_frechet_distance_matches_scipy_and_is_safe_for_singular_covariances():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(400, 12)), rng.normal(size=(300, 12)) * 1.3 + 0.2
    c1, c2 = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    ref = np.sum((a.mean(0) - b.mean(0)) ** 2) + np.trace(c1 + c2 - 2 * linalg.sqrtm(c1 @ c2).real)
    assert ae.frechet_distance(a.mean(0), c1, b.mean(0), c2) == pytest.approx(ref, rel=1e-8)
    assert ae.frechet_distance(a.mean(0), c1, a.mean(0), c1) == pytest.approx(0, abs=1e-9)
    low = rng.normal(size=(5, 12))  # 5 samples in 12 dimensions: rank-deficient covariance
    fd = ae.frechet_distance(low.mean(0), np.cov(low, rowvar=False), b.mean(0), c2)
    assert np.isfinite(fd) and fd > 0


def test_energy_and_threshold():
    logits = np.array([[10.0, 0.0, 0.0], [0.1, 0.0, 0.2]])
    e = ae.energy(logits, temperature=2.0)
    assert e == pytest.approx(-2.0 * np.log(np.exp(logits / 2).sum(1)))
    assert e[0] < e[1]  # a confident input has lower energy
    energies = np.arange(1000.0)
    assert ae.energy_threshold(energies, 99.5) == pytest.approx(np.percentile(energies, 99.5))
    assert ae.energy_threshold(energies, 100) == 999
    for bad in (0, -1, 100.5):
        with pytest.raises(ValueError, match=r"percentile must be in \(0, 100\]"):
            ae.energy_threshold(energies, bad)
    with pytest.raises(ValueError, match="temperature"):
        ae.energy(logits, 0)


def test_meta_sets_have_their_own_generators_and_keep_labels():
    sets = list(ae.meta_dataset(DIGITS[:300], LABELS[:300], n_sets=6, set_size=50, seed=3))
    assert len(sets) == 6
    again = list(ae.meta_dataset(DIGITS[:300], LABELS[:300], n_sets=6, set_size=50, seed=3))
    for (x, y, used), (x2, y2, used2) in zip(sets, again):
        assert np.array_equal(x, x2) and np.array_equal(y, y2) and used == used2
        assert x.shape == (50, 16, 16) and x.min() >= 0 and x.max() <= 1 and set(used) <= set(ae.TRANSFORMS)
    assert len({tuple(y[:10]) for _, y, _ in sets}) == 6  # different samples per set
    assert len({u for _, _, u in sets}) > 1  # different transformation combinations


def test_transform_set_identity_without_transformations_and_labels_untouched():
    rng = np.random.default_rng(0)
    x, used = ae.transform_set(DIGITS[:10], rng, p=0.0)
    assert used == () and np.allclose(x, DIGITS[:10])
    x, used = ae.transform_set(DIGITS[:10], np.random.default_rng(1), p=1.0)
    assert used == ae.TRANSFORMS and not np.allclose(x, DIGITS[:10])


def test_atc_threshold_matches_error_rate():
    rng = np.random.default_rng(0)
    conf = rng.uniform(size=1000)
    correct = rng.uniform(size=1000) < 0.7
    t = ae.atc_threshold(conf, correct)
    assert np.mean(conf < t) == pytest.approx(1 - correct.mean(), abs=2e-3)


def _outputs(n, k=10, dim=6, correct_share=1.0, seed=0, scale=5.0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    hit = rng.random(n) < correct_share
    logits[np.arange(n), np.where(hit, labels, (labels + 1) % k)] += scale
    feats = rng.normal(size=(n, dim)) + hit[:, None]
    return ae.Outputs(logits, feats, rng.random(n)), labels


def test_mix_counts_every_ood_image_as_an_error():
    id_out, id_labels = _outputs(500, correct_share=1.0, scale=50.0)
    ood_out, _ = _outputs(300, seed=1)
    out, truth, is_ood = ae.mix(id_out, id_labels, ood_out, 200, 0.1, np.random.default_rng(0))
    assert len(out.logits) == 200 and is_ood.sum() == 20 and truth == pytest.approx(0.9)
    with pytest.raises(ValueError, match="needs more images"):
        ae.mix(id_out, id_labels, ood_out, 2000, 0.1, np.random.default_rng(0))


def test_estimates_combine_id_share_and_autoeval():
    meta = [_outputs(200, correct_share=s, seed=i) for i, s in enumerate(np.linspace(0.3, 1.0, 30))]
    train, _ = _outputs(500, seed=99)
    val, val_labels = _outputs(300, correct_share=0.8, seed=98)
    est = ae.fit([o for o, _ in meta], [y for _, y in meta], train, val, val_labels, hidden=(16, 8))
    test, _ = _outputs(300, correct_share=0.7, seed=7, scale=1.0)
    tau = ae.energy_threshold(est.ref.energies, 99.5)
    inside = ae.energy(test.logits) <= tau
    e = est.estimates(test, 99.5)
    assert set(e) == set(ae.METHODS)
    assert e["autoeval_energy_ood"] == pytest.approx(inside.mean() * est.predict_mlp(test.subset(inside)))
    conf = test.probs.max(1)
    assert e["softmax_0.9"] == pytest.approx((conf > 0.9).mean()) and e[
        "average_confidence"
    ] == pytest.approx(conf.mean())
    assert e["doc"] == pytest.approx(np.clip(conf.mean() + est.val_accuracy - est.val_confidence, 0, 1))
    assert all(0 <= v <= 1 for v in e.values())
    with pytest.raises(ValueError, match="empty"):
        est.estimates(test.subset(np.zeros(300, bool)))


@pytest.mark.parametrize("source", ae.OOD_SOURCES)
def test_ood_sources(source):
    x = ae.ood_images(source, 20, side=16, seed=0)
    assert (
        x.shape == (20, 16, 16) and x.dtype == np.float32 and x.min() >= 0 and x.max() <= 1 and x.std() > 0.05
    )
    assert np.array_equal(x, ae.ood_images(source, 20, side=16, seed=0))


def test_bad_input():
    with pytest.raises(ValueError, match="unknown OOD source"):
        ae.ood_images("svhn", 10)
    with pytest.raises(ValueError, match="empty"):
        ae.compute_outputs(None, np.zeros((0, 16, 16)))
    with pytest.raises(ValueError, match=r"\(N, S, S\)"):
        ae.compute_outputs(None, np.zeros((4, 16, 12)))
    with pytest.raises(ValueError, match=r"\(N, S, S\)"):
        list(ae.meta_dataset(np.zeros((4, 3, 16, 16)), np.zeros(4), 2, 2))
    with pytest.raises(ValueError, match="set_size"):
        list(ae.meta_dataset(DIGITS[:10], LABELS[:10], 2, 20))
    with pytest.raises(ValueError, match="at least two"):
        ae.representation(np.zeros((1, 4)), None)


def test_feature_net_trains_and_exposes_features_and_rotation():
    model = ae.train_feature_net(DIGITS[:256], LABELS[:256], epochs=1, seed=0)
    out = ae.compute_outputs(model, DIGITS[256:300], rotation=True)
    assert out.logits.shape == (44, 10) and out.features.shape == (44, 64)
    assert out.rotation_correct.shape == (44,) and np.all(
        (out.rotation_correct >= 0) & (out.rotation_correct <= 1)
    )


def test_auxiliary_outliers_are_not_a_test_ood_source():
    aux = ae.auxiliary_outliers(60, side=16, seed=0)
    assert aux.shape == (60, 16, 16) and aux.dtype == np.float32 and aux.min() >= 0 and aux.max() <= 1
    assert np.array_equal(aux, ae.auxiliary_outliers(60, side=16, seed=0))
    assert not set(ae.AUXILIARY_SYMBOLS) & set(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    )
    for source in ae.OOD_SOURCES:  # no test image reappears among the auxiliary outliers
        test = ae.ood_images(source, 60, side=16, seed=0)
        assert np.min(np.abs(aux[:, None] - test[None]).sum(axis=(2, 3))) > 1.0
    with pytest.raises(ValueError, match="positive"):
        ae.auxiliary_outliers(0)


def test_regularisation_is_chosen_on_validation_meta_sets():
    meta = [_outputs(200, correct_share=s, seed=i) for i, s in enumerate(np.linspace(0.3, 1.0, 30))]
    val = [_outputs(200, correct_share=s, seed=100 + i) for i, s in enumerate(np.linspace(0.35, 0.95, 8))]
    train, _ = _outputs(500, seed=99)
    v, vl = _outputs(300, correct_share=0.8, seed=98)
    est = ae.fit(
        [o for o, _ in meta],
        [y for _, y in meta],
        train,
        v,
        vl,
        hidden=(16, 8),
        alphas=(1e-3, 1.0),
        val_meta=([o for o, _ in val], [y for _, y in val]),
    )
    assert est.mlp_alpha in (1e-3, 1.0)
    no_val = ae.fit(
        [o for o, _ in meta], [y for _, y in meta], train, v, vl, hidden=(16, 8), alphas=(1.0, 1e-3)
    )
    assert no_val.mlp_alpha == 1.0


def test_outlier_exposure_detector_separates_outliers_and_leaves_the_classifier_alone():
    from sklearn.metrics import roc_auc_score

    aux = ae.auxiliary_outliers(1200, side=16, seed=1)
    fit_aux, held_out = aux[:1000], aux[1000:]
    model = ae.train_feature_net(DIGITS[:800], LABELS[:800], epochs=3, seed=0, width=8)
    before = [p.detach().clone() for p in model.parameters()]
    detector = ae.train_detector(model, DIGITS[:800], LABELS[:800], fit_aux, epochs=3, seed=0)
    assert all(np.array_equal(a.numpy(), b.detach().numpy()) for a, b in zip(before, model.parameters()))

    test_digits = DIGITS[800:1100]
    y = np.r_[np.zeros(len(test_digits)), np.ones(len(held_out))]

    def auroc(net):  # held-out outliers against held-out digits, by energy
        return roc_auc_score(
            y,
            np.r_[
                ae.energy(ae.compute_outputs(net, test_digits).logits),
                ae.energy(ae.compute_outputs(net, held_out).logits),
            ],
        )

    assert 1 - auroc(detector) < 0.5 * (
        1 - auroc(model)
    )  # outlier exposure at least halves the ranking error
    out = ae.compute_outputs(model, held_out, detector=detector)
    assert np.allclose(out.energy, ae.energy(ae.compute_outputs(detector, held_out).logits))
    assert np.allclose(out.energies(), out.energy) and out.subset(np.arange(5)).energy.shape == (5,)
    with pytest.raises(ValueError, match="m_in < m_out"):
        ae.train_detector(model, DIGITS[:64], LABELS[:64], fit_aux, epochs=1, margins=(-1.0, -5.0))


def test_estimates_use_the_detectors_energies_when_given():
    meta = [_outputs(200, correct_share=s, seed=i) for i, s in enumerate(np.linspace(0.3, 1.0, 30))]
    train, _ = _outputs(500, seed=99)
    train.energy = np.linspace(-10, -5, 500)  # the threshold at the 99.5th percentile is about -5.02
    val, val_labels = _outputs(300, correct_share=0.8, seed=98)
    est = ae.fit([o for o, _ in meta], [y for _, y in meta], train, val, val_labels, hidden=(16, 8))
    test, _ = _outputs(300, correct_share=0.7, seed=7)
    test.energy = np.where(np.arange(300) < 60, 0.0, -8.0)  # the detector flags the first 60 images
    e = est.estimates(test, 99.5)
    assert e["autoeval_energy_ood"] == pytest.approx(0.8 * est.predict_mlp(test.subset(np.arange(60, 300))))
