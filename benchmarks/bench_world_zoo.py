"""Time to render the replication world and to train and predict every model of the zoo.

Targets (replication-world issue): default world and zoo from cold <= 10 minutes on a 2-core machine,
warm (everything cached) <= 10 s, smoke <= 60 s. This script times the cold path piece by piece --
rendering, then each model (training plus prediction on every split) -- without touching any cache,
and prints a line per model and the total. ``--size smoke`` times the smoke world and zoo.
"""

from __future__ import annotations

import argparse
import time

from shifteval.datasets import world as worlds
from shifteval.zoo import models

SMOKE_WORLD = {"n_train": 1000, "n_v1": 400, "n_pool": 3000, "per_class": 40}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", choices=["default", "smoke"], default="default")
    args = parser.parse_args()
    start = time.perf_counter()
    w = worlds.build_world(SMOKE_WORLD if args.size == "smoke" else {})
    t_world = time.perf_counter() - start
    print(f"world: {len(w.examples)} images rendered and sampled in {t_world:.1f} s")
    train = w.split_index("train")
    images = {s: w.images[w.split_index(s)] for s in w.split_names}
    total = t_world
    for spec in models.default_zoo(args.size):
        t0 = time.perf_counter()
        probs = models.train_and_predict(spec, w.images[train], w.labels[train], images, seed=w.config.seed)
        dt = time.perf_counter() - t0
        total += dt
        acc = (probs["v1"].argmax(1) == w.labels[w.split_index("v1")]).mean()
        print(f"{spec.name:28s} {spec.family:8s} {dt:7.1f} s   v1 accuracy {acc:.3f}")
    print(f"total cold time ({args.size}): {total:.0f} s")


if __name__ == "__main__":
    main()
