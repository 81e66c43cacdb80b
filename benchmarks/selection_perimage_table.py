"""Engstrom et al.'s estimators on fresh votes with a per-image number of annotators on both sets.

Re-measures the estimators' mean errors on the replication world: v1 and its statistic-matched MatchedFrequency
replication (drawn from a harder pool), every image of both re-annotated by its own number of fresh
annotators (uniform on ``--annotators lo hi``, 32..48 by default), the world's true selection
frequencies giving the truth (``selection.true_adjusted_accuracy``). Prints each estimator's mean error
(estimate − truth, accuracy points, mean over the zoo's models and over ``--rounds`` independent vote
rounds): the observed v2 accuracy, the naive estimator and the parametric one on the per-image counts,
the jackknife, and the parametric estimator with every image cut to its first ``lo`` votes.
"""

from __future__ import annotations

import argparse

import numpy as np

from shifteval import selection
from shifteval import zoo as zoos
from shifteval.datasets import world as worlds
from shifteval.selection import study as selection_study


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--annotators", type=int, nargs=2, default=[32, 48])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--zoo", default="default")
    args = parser.parse_args()
    lo, hi = args.annotators
    w = worlds.build_world({})
    zoo = zoos.build_zoo(w, zoos.default_zoo(args.zoo))
    v1, v2 = w.split_index("v1"), w.split_index("matchedfrequency")
    s1, s2 = w.examples.s.to_numpy()[v1], w.examples.s.to_numpy()[v2]
    correct = zoo.correct("matchedfrequency")
    truth = selection.true_adjusted_accuracy(s1, s2, correct)
    rows = {k: [] for k in ("observed", "naive", "jackknife", "parametric", f"parametric, cut to {lo}")}
    for r in range(args.rounds):
        votes1, votes2 = selection_study.reannotate(s1, s2, [lo, hi], seed=0, round=r + 1)
        (c1, annotators_v1), (c2, annotators_v2) = (selection_study.vote_counts(v) for v in (votes1, votes2))
        rows["observed"].append(correct.mean(1))
        rows["naive"].append(
            selection.naive_adjusted_accuracy(c1, c2, correct, (annotators_v1, annotators_v2))
        )
        rows["jackknife"].append(selection.jackknife_adjusted_accuracy(votes1, votes2, correct).corrected)
        rows["parametric"].append(
            selection.parametric_adjusted_accuracy(c1, c2, correct, (annotators_v1, annotators_v2))[0]
        )
        k1, k2 = votes1[:, :lo].sum(1).astype(int), votes2[:, :lo].sum(1).astype(int)
        rows[f"parametric, cut to {lo}"].append(
            selection.parametric_adjusted_accuracy(k1, k2, correct, lo)[0]
        )
    print(f"world default: {len(s1)} v1 and {len(s2)} MatchedFrequency images, {len(correct)} models, ")
    print(f"fresh votes from {lo}..{hi} annotators per image on both sets, {args.rounds} vote rounds")
    print(f"{'estimator':28s} {'mean error (points)':>20s} {'sd over rounds':>15s}")
    for name, values in rows.items():
        err = 100 * (np.asarray(values) - truth).mean(axis=1)  # one mean error per round
        print(f"{name:28s} {err.mean():20.2f} {err.std(ddof=1) if len(err) > 1 else 0.0:15.2f}")


if __name__ == "__main__":
    main()
