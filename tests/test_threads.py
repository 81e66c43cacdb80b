"""Claims that survive another machine's arithmetic: the torch-trained chapters on another thread count.

Every chapter computes on the same thread count on every machine (:mod:`shifteval.book.threads`), but a
processor with other vector instructions still runs other kernels. Training on two threads instead of one
is one such change of arithmetic (sums split differently, amplified over the epochs), so the two chapters
whose networks train for many epochs (each declares one thread) are re-run so, with their default
parameters: every claim must still hold, i.e. no number a claim rests on may move past that claim's margin.
"""

import json
import math

import pytest
from background import OTHER_THREADS
from conftest import run_default

TORCH_CHAPTERS = ["ood-autoeval", "mlm"]


def _leaves(value, path=""):
    """Every number a chapter recorded (``results.json`` outside provenance, claims and citations)."""
    if isinstance(value, dict):
        skip = {"provenance", "claims", "citations", "figures"} if not path else set()
        return {
            k: v
            for key, item in value.items()
            if key not in skip
            for k, v in _leaves(item, f"{path}/{key}").items()
        }
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _leaves(item, f"{path}[{i}]").items()}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {path: float(value)}
    return {}


@pytest.fixture(scope="module")
def other_thread_runs(background_runs):
    """Each torch chapter's default run on two threads, in its own project copy:
    ``{chapter: (exit status, stderr, results path)}``.

    The runs may have started long before, beside the tests that use one core (``tests/background.py``);
    if not, they start now, side by side as the cores allow.
    """
    return background_runs.results()


@pytest.mark.slow
@pytest.mark.heavy
@pytest.mark.parametrize("chapter", TORCH_CHAPTERS)
def test_claims_hold_when_the_networks_train_on_another_thread_count(
    chapter, other_thread_runs, default_project
):
    status, stderr, results = other_thread_runs[chapter]
    # a default run fails, naming them, when any claim does not hold
    assert status == 0, stderr[-3000:]
    other = json.loads(results.read_text())
    book = run_default(default_project, chapter)  # the book's run, shared with the chapter's own tests
    assert book["provenance"]["threads"] == 1 and other["provenance"]["threads"] == OTHER_THREADS
    assert book["provenance"]["strict_claims"] and other["provenance"]["strict_claims"]
    assert [c["id"] for c in other["claims"]] == [c["id"] for c in book["claims"]]
    assert all(c["holds"] for c in other["claims"]), [c["id"] for c in other["claims"] if not c["holds"]]
    a, b = _leaves(book), _leaves(other)
    assert a.keys() == b.keys()
    moved = {k: (a[k], b[k]) for k in a if not (a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])))}
    assert moved, "the two-thread run recorded the same numbers: it did not test other arithmetic"
    largest = sorted(moved.items(), key=lambda kv: -abs(kv[1][0] - kv[1][1]))[:8]
    print(f"\n{chapter}: {len(moved)} of {len(a)} recorded numbers moved; largest: {largest}")
