"""Derive the shipped per-image correctness table from the official ImageNetV2 release.

    python scripts/derive_imagenetv2_correctness.py RELEASE_ROOT [--out-dir DIR]

RELEASE_ROOT holds the release's layout (``data/predictions``, ``data/datasets``, ``data/metadata``,
``LICENSE``), e.g. after ``shifteval data get imagenetv2-predictions --root DIR`` it is
``DIR/imagenetv2-predictions``. Writes into DIR (default: the package's ``data/released``):

- ``imagenetv2_correctness.npz``: bit-packed top-1/top-5 correctness per model and image, model and
  dataset names, image class ids (deterministic bytes; see ``released.save_correctness``);
- ``imagenetv2_correctness.json``: source, pinned commit, licence, the release's warts as repaired,
  sha256 of the table;
- ``imagenetv2_correctness.LICENSE``: the release's licence (MIT), which the table inherits.
"""

from __future__ import annotations

import argparse
import hashlib
import warnings
from pathlib import Path

from shifteval.datasets import download, released
from shifteval.utils.io import atomic_write_json, atomic_write_text

PAPER_NAMES = released.IMAGENETV2_NAMES
PACKAGE_DIR = Path(__file__).resolve().parents[1] / "src" / "shifteval" / "data" / "released"


def derive(root: Path, out_dir: Path) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", released.ReleaseWarning)
        corr = released.load("imagenetv2-predictions", root)
    npz = released.save_correctness(corr, out_dir / "imagenetv2_correctness.npz")
    licence = (root / "LICENSE").read_text(encoding="utf-8")
    atomic_write_text(out_dir / "imagenetv2_correctness.LICENSE", licence)
    src = download.source("imagenetv2-predictions")
    commit = src.files[0].url.split("/raw/")[1].split("/")[0]
    atomic_write_json(
        out_dir / "imagenetv2_correctness.json",
        {
            "description": "Per-image top-1 and top-5 correctness of the 67 models of Recht et al. (2019) "
            "on ImageNet validation and the three ImageNetV2 test sets, derived from the released top-5 "
            "predictions.",
            "source": src.homepage,
            "commit": commit,
            "licence": "MIT (as its source; see imagenetv2_correctness.LICENSE)",
            "citation": src.citation,
            "derived_by": "scripts/derive_imagenetv2_correctness.py",
            "datasets": {
                d: {"images": len(corr.labels[d]), "paper_name": PAPER_NAMES.get(d, "validation")}
                for d in corr.datasets
            },
            "models": len(corr.models),
            "format": "npz (stored zip): models, datasets, labels.<dataset> (int16 class ids), "
            "top1.<dataset> and top5.<dataset> (np.packbits of bool models x images along axis 1)",
            "warnings": list(corr.warnings),
            "sha256": hashlib.sha256(npz.read_bytes()).hexdigest(),
        },
    )  # fmt: skip
    for path in out_dir.glob("imagenetv2_correctness.*"):
        path.chmod(0o644)
    return npz


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", type=Path, help="folder of the ImageNetV2 release")
    parser.add_argument("--out-dir", type=Path, default=PACKAGE_DIR)
    args = parser.parse_args()
    npz = derive(args.root, args.out_dir)
    print(f"{npz} ({npz.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
