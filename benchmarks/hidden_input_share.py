"""Print each chapter's share of code lines in cells whose input the book hides.

A chapter should read, opened in Jupyter, as prose, code a student would write, and figures: the
bookkeeping behind its sentences (claims, recorded numbers) sits in cells tagged ``remove-input`` or
``remove-cell``. This counts non-blank, non-comment code lines per cell kind.

Usage: ``python benchmarks/hidden_input_share.py [--max SHARE]`` (exit status 1 when a chapter's
share exceeds ``--max``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = {"remove-input", "remove-cell"}


def code_lines(source: str) -> int:
    """Non-blank lines that are not comments."""
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def shares(notebooks: Path = ROOT / "notebooks") -> dict[str, tuple[int, int]]:
    """``{chapter: (hidden code lines, all code lines)}``."""
    out = {}
    for path in sorted(notebooks.glob("*.py")):
        hidden = total = 0
        for cell in jupytext.read(path).cells:
            if cell.cell_type != "code":
                continue
            n = code_lines(cell.source)
            total += n
            hidden += n if HIDDEN & set(cell.metadata.get("tags", [])) else 0
        out[path.stem] = (hidden, total)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=float, default=None, help="largest allowed share (e.g. 0.4)")
    args = parser.parse_args(argv)
    worst = 0.0
    print(f"{'chapter':<20} {'hidden':>7} {'all':>6} {'share':>6}")
    for chapter, (hidden, total) in shares().items():
        share = hidden / total if total else 0.0
        worst = max(worst, share)
        print(f"{chapter:<20} {hidden:>7} {total:>6} {share:>6.0%}")
    return int(args.max is not None and worst > args.max)


if __name__ == "__main__":
    sys.exit(main())
