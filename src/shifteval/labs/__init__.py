"""Autograded labs, one per chapter: the student implements a piece of the chapter's method.

- :mod:`.data` — the arrays each lab works on (:func:`~.data.write`, :func:`~.data.load`);
- :mod:`.build` — student, solution and autograder editions with Otter-Grader (:func:`~.build.build_labs`),
  and offline grading (:func:`~.build.grade`).

``shifteval labs`` builds them under ``_build/labs/``; ``shifteval grade LAB NOTEBOOK...`` grades.
"""

from .build import LabError, build_lab, build_labs, grade
from .data import LABS, load

__all__ = ["LABS", "LabError", "build_lab", "build_labs", "grade", "load"]
