"""Draw the README's figure: Recht et al. (2019), Figure 1, as the linear-fits chapter draws it.

    python scripts/readme_figure.py [--out book/images/headline.png] [--n-boot 2000] [--seed 0]

New against original accuracy of the models in the paper's published tables (CIFAR-10, Table 11;
ImageNet top-1 MatchedFrequency, Table 14, the 64 convolutional networks), with the linear fits and
their bootstrap confidence regions computed by :func:`shifteval.linfit.recht2019.fit_recht2019` and
drawn by :func:`shifteval.viz.linear_fits.fig1_linear_fits`, the same calls as the chapter's. The
chapter uses the paper's 100,000 bootstrap replicates; 2,000 draw the same picture in seconds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from shifteval import viz  # noqa: E402  (after choosing the backend)
from shifteval.datasets import published  # noqa: E402
from shifteval.linfit import recht2019  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def draw(out: Path, n_boot: int = 2000, seed: int = 0) -> Path:
    viz.common.set_style()
    fits = recht2019.fit_recht2019(n_boot=n_boot, seed=seed)
    cifar = published.load_table("recht2019_cifar10")
    imnet = published.load_table("recht2019_imagenet_top1_matchedfrequency")
    imnet_cnn = imnet[~published.is_fisher_vector(imnet.model)]
    fig = viz.linear_fits.fig1_linear_fits(cifar, imnet_cnn, fits)
    out.parent.mkdir(parents=True, exist_ok=True)
    # 150 dpi: about 1,200 pixels wide, sharp at the width GitHub shows a README's images
    fig.savefig(out, dpi=150, bbox_inches="tight", metadata={"Software": None})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "book" / "images" / "headline.png")
    parser.add_argument("--n-boot", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = draw(args.out, n_boot=args.n_boot, seed=args.seed)
    print(f"{out} ({out.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
