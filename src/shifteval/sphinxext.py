"""Sphinx extension of the book: math rendered by a MathJax copy inside the book, never a CDN.

MathJax 2.7 comes from the ``jupyter-server-mathjax`` package (the copy the Jupyter notebook served);
it is copied to ``_static/mathjax`` of the HTML output after each build, and ``_config.yml`` points
``mathjax_path`` there. That copy ships the STIX-Web fonts only, so MathJax is told to use them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

MATHJAX_PATH = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
MATHJAX2_CONFIG = {
    "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web", "imageFont": None},
    "SVG": {"font": "STIX-Web"},
    "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]], "processEscapes": True},
}


def mathjax_source() -> Path:
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).parent / "static"


def _configure(app, config):
    config.mathjax_path = MATHJAX_PATH
    config.mathjax2_config = MATHJAX2_CONFIG
    config.mathjax3_config = None


def _copy_mathjax(app, exception):
    if exception is None and app.builder.format == "html":
        shutil.copytree(mathjax_source(), Path(app.outdir) / "_static" / "mathjax", dirs_exist_ok=True)


def setup(app):
    app.connect("config-inited", _configure, priority=900)
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
