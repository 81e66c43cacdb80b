"""Recompute the severity table ``shifteval.corruptions.SEVERITY``.

Trains the MLM chapter's CNN exactly as the chapter does with its default parameters (default
replication world, 10 epochs, seed 0), measures its accuracy on the perturbed v1 test set over a grid of
strengths for every perturbation, and picks the strengths at which accuracy falls linearly from one point
below clean accuracy (level 1) to 49% (level 10), the paper's average end point. Prints the table to
paste into ``src/shifteval/corruptions.py``. Runs in a few minutes on a laptop CPU:

    python scripts/calibrate_corruptions.py
"""

import numpy as np

from shifteval import corruptions, mlm
from shifteval.datasets import world as worlds
from shifteval.zoo.models import predict_torch

GRIDS = {
    "brightness": (0.02, 0.6), "contrast": (0.05, 0.97), "defocus_blur": (0.3, 10.0), "fog": (0.05, 4.0),
    "frost": (0.05, 2.5), "gaussian_noise": (0.02, 1.2), "impulse_noise": (0.01, 0.7),
    "motion_blur": (0.5, 25.0), "pixelation": (0.05, 0.95), "shot_noise": (0.05, 2.0), "snow": (0.01, 0.8),
    "zoom_blur": (0.02, 2.0),
}  # fmt: skip
LAST_LEVEL_ACCURACY = 0.49


def main(points: int = 40):
    world = worlds.build_world({})
    train, test = world.split_index("train"), world.split_index("v1")
    model = mlm.train_classifier(world.images[train], world.labels[train], epochs=10, seed=0)
    x, y = world.images[test], world.labels[test]
    clean = float((predict_torch(model, x).argmax(1) == y).mean())
    targets = np.linspace(clean - 0.01, LAST_LEVEL_ACCURACY, 10)
    print(f"# clean accuracy {clean:.4f}; targets {np.round(targets, 3).tolist()}")

    def accuracy_at(name, t):
        return float((predict_torch(model, corruptions.apply(x, name, t, seed=0)).argmax(1) == y).mean())

    print("SEVERITY = {")
    for name in corruptions.CORRUPTIONS:
        grid = np.linspace(*GRIDS[name], points)
        levels = corruptions.calibrate(accuracy_at, name, grid, targets)
        print(f'    "{name}": ({", ".join(f"{t:.3g}" for t in levels)}),', flush=True)
    print("}")


if __name__ == "__main__":
    main()
