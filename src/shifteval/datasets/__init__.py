"""Data sources: tables transcribed from the papers (:mod:`shifteval.datasets.published`)."""
