"""Print a severity table calibrated the way the MLM chapter calibrates, for pasting as a fixed table.

The chapter calibrates in every run (``shifteval.mlm.calibrate_severities``); this script exists to
recompute ``shifteval.corruptions.SEVERITY``, the fallback table used when no calibration is given. It
follows the chapter: a *calibration model* (the paper's CNN, seed 1) is trained on the replication world's
training images minus a held-out split of 1,000, and each perturbation's strength per level is set where
that model's accuracy on the held-out split crosses that perturbation's profile (``mlm.paper_profile``:
the paper's stated accuracies where it gives them, what its averages of 97.61% at level 1 and 48.83% at
level 10 leave elsewhere; relative to clean accuracy; Sikar et al. §4.4). Neither the evaluated model nor
any test image is involved:

    python scripts/calibrate_corruptions.py
"""

from shifteval import mlm
from shifteval.datasets import world as worlds


def main(points: int = 24, n_calibration: int = 1000, seed: int = 0):
    world = worlds.build_world({})
    train = world.split_index("train")
    x, y = world.images[train], world.labels[train]
    fit, cal = mlm.calibration_split(len(x), n_calibration, seed)
    model = mlm.train_classifier(x[fit], y[fit], epochs=10, seed=seed + 1)
    res = mlm.calibrate_severities(model, x[cal], y[cal], points=points, seed=seed + 1)
    print(f"# calibration accuracy {res['clean']:.4f}; targets {res['targets'].round(3).tolist()}")
    print("SEVERITY = {")
    for name, levels in res["severity"].items():
        print(f'    "{name}": ({", ".join(f"{t:.3g}" for t in levels)}),')
    print("}")


if __name__ == "__main__":
    main()
