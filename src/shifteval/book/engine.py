"""The papermill engine the pipeline executes chapters with: papermill's own, writing the notebook once.

Papermill writes the whole executed notebook to its output path before and after every cell, so that a
person can watch a long run from the file. A chapter is executed in a private staging folder nobody watches
(:mod:`shifteval.book.pipeline`), and its notebook carries every figure as an image: rewritten twice per
cell, 60 to 150 cells, it cost seconds per chapter in serialising alone. This engine is papermill's
default (nbclient) engine with the writes kept to the end of the run, when papermill writes the notebook
whether the run succeeded or a cell raised; a run that is killed leaves nothing half-written (the
pipeline publishes only a complete run).
"""

from __future__ import annotations

from papermill.engines import NBClientEngine, NotebookExecutionManager, papermill_engines

#: The name the pipeline gives papermill's ``engine_name``.
ENGINE = "shifteval"


class _SavedAtTheEnd(NotebookExecutionManager):
    """Papermill's execution manager, which writes the notebook only when the run ends."""

    ended = False

    def save(self, **kwargs):
        """Write the notebook, once the run has ended (papermill asks before and after every cell)."""
        if self.ended:
            super().save(**kwargs)

    def notebook_complete(self, **kwargs):
        """The run ended (a cell may have raised): papermill's final bookkeeping, then the one write."""
        self.ended = True
        super().notebook_complete(**kwargs)


class SavedAtTheEnd(NBClientEngine):
    """Papermill's nbclient engine, with the notebook written once, when the run ends.

    Examples
    --------
    >>> import papermill
    >>> ENGINE in papermill.engines.papermill_engines._engines
    True
    """

    @classmethod
    def execute_notebook(cls, nb, kernel_name, output_path=None, progress_bar=True, log_output=False,
                         autosave_cell_every=30, **kwargs):  # fmt: skip
        """Execute ``nb`` as papermill's engines do (see :meth:`papermill.engines.Engine.execute_notebook`)."""
        nb_man = _SavedAtTheEnd(nb, output_path=output_path, progress_bar=progress_bar, log_output=log_output,
                                autosave_cell_every=autosave_cell_every)  # fmt: skip
        nb_man.notebook_start()
        try:
            cls.execute_managed_notebook(nb_man, kernel_name, log_output=log_output, **kwargs)
        finally:
            nb_man.cleanup_pbar()
            nb_man.notebook_complete()
        return nb_man.nb


papermill_engines.register(ENGINE, SavedAtTheEnd)
