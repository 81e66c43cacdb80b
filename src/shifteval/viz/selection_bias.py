"""Figures of the selection-bias chapter (Engstrom et al. 2020)."""

from __future__ import annotations
