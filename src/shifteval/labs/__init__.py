"""Autograded labs, one per chapter: a lab session that builds to one of the chapter's findings.

- :mod:`.data` — the arrays each lab works on (:func:`~.data.write`, :func:`~.data.load`);
- :mod:`.build` — student, solution and autograder editions with Otter-Grader (:func:`~.build.build_labs`),
  and offline grading (:func:`~.build.grade`);
- :mod:`.manual` — the answers to the manually graded questions, exported for marking
  (:func:`~.manual.export`).

``shifteval labs`` builds them under ``_build/labs/``; ``shifteval grade LAB NOTEBOOK...`` grades. The book's
page on teaching says how to hand them out, grade them and write a new one.
"""

from .build import LabError, build_lab, build_labs, grade, lab_questions
from .data import LABS, load

__all__ = ["LABS", "LabError", "build_lab", "build_labs", "grade", "lab_questions", "load"]
