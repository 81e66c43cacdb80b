"""The replication-world chapter: the book's results and claims."""

import json


def test_replication_world_results_show_the_mechanism(built_book):
    """The mechanism on the book's page (the default run: 31 models)."""
    project, _ = built_book
    res = json.loads((project / "book" / "chapters" / "replication-world.results.json").read_text())
    freq = res["selection_frequency"]
    assert set(freq) == {"v1", "matchedfrequency", "threshold0.7", "topimages"}
    # Engstrom's bias: observed frequencies matched, true frequencies lower
    assert abs(freq["matchedfrequency"]["observed"] - freq["v1"]["observed"]) <= 0.02
    assert freq["v1"]["true"] - freq["matchedfrequency"]["true"] >= 0.02
    # Recht's Table 2 ordering of the mean accuracy change
    change = res["accuracy_change"]
    assert change["matchedfrequency"] < change["threshold0.7"] < change["topimages"]
    assert change["matchedfrequency"] < 0
    assert set(res["fraction_models_dropping"]) == set(change)
    # the ablation shrinks the MatchedFrequency drop
    assert res["ablation"]["drop_noise_free"] < res["ablation"]["drop_noisy"] / 2
    assert res["zoo"]["n_models"] == 31


def test_replication_world_default_run_states_only_claims_that_hold(default_project):
    from conftest import run_default

    res = run_default(default_project, "replication-world")
    claims = res["claims"]
    assert len(claims) >= 6 and all(c["holds"] for c in claims), [c["id"] for c in claims if not c["holds"]]
    sizes = res["world"]["sizes"]
    assert sizes["v1"] == 5 * sizes["matchedfrequency"]  # the papers' 5:1 ratio
    more = res["more_annotators"]["selection_frequency"]["matchedfrequency"]["true"]
    built = res["selection_frequency"]["matchedfrequency"]["true"]
    assert more > built  # more annotators: MatchedFrequency's true frequency closer to v1's
    assert res["zoo"]["n_models"] >= 25
    assert set(res["figures"]) >= {f"replication-world-fig{i}" for i in range(1, 6)}
