"""The replication-world chapter: the book's results, claims and findings."""

import json

import jupytext
from conftest import ROOT

from shifteval.book import prose
from shifteval.book.claims import above, below
from shifteval.book.findings import Finding, matches, same_direction


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
    # Figure 16's sentence says inside or outside Recht et al.'s 10 to 15 points as the run's value lies
    findings = {f["id"]: f for f in res["findings"]}
    d16 = findings["fig16-v1-middle-bin"]["run_value"]
    text = next(c["text"] for c in claims if c["id"] == "fig16-v1-middle-bin")
    assert f"{d16:.1f} points below the whole set" in text
    assert ("inside the range" in text) == (10 <= d16 <= 15) != ("outside the range" in text)
    summary = next(c for c in claims if c["id"] == "findings-summary")  # the tally the chapter ends with
    assert len(findings) >= 8 and f"tests {len(findings)} results" in summary["text"]


def test_the_figure_16_sentence_takes_its_words_from_the_value():
    """The sentence on Figure 16 names the paper's range of 10 to 15 points and says where the run's value
    lies from the finding's verdict: a value of 9.1 is outside it, not "at its low end"."""
    template = prose.templates(jupytext.read(ROOT / "notebooks" / "replication-world.py"))[
        "fig16-v1-middle-bin"
    ]

    def sentence(d16, mf=22.7):
        f = Finding("fig16-v1-middle-bin", "recht2019imagenet", "Figure 16", "s", "q", "10 to 15", d16,
                    matches(d16, 12.5, tol=2.5))  # fmt: skip
        smaller = Finding("x", "recht2019imagenet", "Figure 16", "s", "q", 17.5, mf - d16,
                          same_direction(mf - d16, 17.5))  # fmt: skip
        fields = {"test": above(d16, 0) & below(d16, mf), "cite": "Figure 16", "finding": f}
        return prose.fill(template, fields | {"finding_smaller": smaller})

    assert "9.1 points below the whole set, outside the range" in sentence(9.1)
    assert "12.0 points below the whole set, inside the range" in sentence(12.0)
    assert "outside the range" in sentence(16.0)
