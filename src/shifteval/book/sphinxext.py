"""Sphinx extension of the book: math rendered by a MathJax copy inside the book, never a CDN.

MathJax 3 comes from the ``sphinx-mathjax-offline`` package (MathJax's own ``es5`` distribution). The
book uses its ``tex-svg-full.js`` component: TeX input with every extension built in and SVG output,
whose glyphs are paths inside the script. It needs no web fonts, which browsers refuse to load for
pages opened from the file system (``file://`` is an opaque origin); so the same HTML renders its math
from a folder, a static web server or a USB stick. The files are copied to ``_static/mathjax`` after
each HTML build. myst-parser fills in ``mathjax3_config`` (which HTML classes MathJax processes).

Tables: a chapter glues a table (:meth:`shifteval.book.results.Results.table`) and places it with
myst-nb's ``glue:figure`` under a name starting with ``tbl-``; this extension turns that figure into a
:class:`glued_table`, which Sphinx numbers and cross-references as a *table* ("Table 3", ``{numref}``).
The caption stays below the table: HTML figures end with their caption. A table heading may break after
an underscore (``<wbr>``), so a row named by an identifier (``timm mobilenetv3_small_050``) lets the
table narrow to the text column; the name reads and copies as written.

Labs: ``{lab}`NAME``` links a chapter's lab (:mod:`shifteval.labs`, built under ``_build/labs`` by
``shifteval labs``): the student edition (``hide_solutions``) links ``NAME-student.zip``, the full edition
``NAME-solution.zip`` (solution notebook; the autograder bundle lies beside it under ``_build/labs``). The
zips are copied into the HTML's ``labs/`` folder after each build, and by ``shifteval labs`` into every
edition already built (``make book`` runs both).

Downloads: every copy of a chapter's executed notebook that the HTML offers (the theme's source link under
``_sources/``, the provenance box's link under ``_downloads/``) is replaced by its reader's notebook
(:mod:`shifteval.book.reader`: plain markdown with the page's own figure, table and exercise numbers, the
figures visible, the bookkeeping collapsed); in the student edition without the solutions, and the chapter's
jupytext source offered beside it without them too.

Doctrees: nodes made by a nested parse (autodoc's directives inside a MyST page) keep a reference to that
parse's own ``document``, whose settings hold the whole build environment; Sphinx clears the environment
only from the page's own document before it pickles the page, so every library-reference page stored a
copy of it (about 650 kB each). Sphinx loads every page's doctree again to number figures and to write
the pages, so those copies cost about a quarter of the HTML build. :func:`_own_document` points such nodes
at their page's document before the doctree is pickled.

The extension also gives the theme a ``default_mode`` of ``auto`` (follow the reader's system setting)
in ``html_context`` when ``_config.yml`` does not choose one: left empty, pydata-sphinx-theme logs a
console error on every first visit.
"""

from __future__ import annotations

import re
import shutil
from importlib import metadata
from pathlib import Path

from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.util.docutils import SphinxDirective

MATHJAX_PATH = "mathjax/tex-svg-full.js"
# What tex-svg-full.js may load later (menu, accessibility, speech rules); not the other combined
# components, nor the CommonHTML output and its web fonts.
_MATHJAX_PARTS = ("tex-svg-full.js", "a11y", "adaptors", "input", "output/svg.js", "output/svg", "sre", "ui")


def mathjax_source() -> Path:
    """The MathJax 3 distribution shipped by ``sphinx-mathjax-offline``."""
    try:
        dist = metadata.distribution("sphinx-mathjax-offline")
    except metadata.PackageNotFoundError:
        raise RuntimeError(
            "sphinx-mathjax-offline is not installed; it provides the book's MathJax"
        ) from None
    folder = Path(str(dist.locate_file("sphinx-mathjax-offline/static/mathjax")))
    if not (folder / "tex-svg-full.js").is_file():
        raise RuntimeError(
            f"no tex-svg-full.js in {folder}: the sphinx-mathjax-offline installation is incomplete"
        )
    return folder


def _configure(app, config):
    config.html_static_path = [*config.html_static_path, str(Path(__file__).parent / "static")]
    config.mathjax_path = MATHJAX_PATH
    config.mathjax2_config = None
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context


#: Where the built labs lie, relative to the book's source folder.
LABS_DIR = Path("_build") / "labs"


def _lab_kind(config) -> str:
    return "student" if getattr(config, "hide_solutions", False) else "solution"


def lab_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{lab}`NAME```: a link to the chapter's lab for this edition (the zip ``shifteval labs`` copies)."""
    env = inliner.document.settings.env
    kind = _lab_kind(env.config)
    zipname = f"{text}-{kind}.zip"
    up = "../" * env.docname.count("/")
    label = "the lab with its solution (" if kind == "solution" else "the lab ("
    return [nodes.reference(rawtext, f"{label}{zipname})", refuri=f"{up}labs/{zipname}")], []


def copy_lab_zips(labs: Path, html: Path, kind: str) -> list[Path]:
    """Copy the built labs' ``*-<kind>.zip`` into an HTML edition's ``labs/`` folder.

    Parameters
    ----------
    labs : pathlib.Path
        Where ``shifteval labs`` wrote the labs (``_build/labs``).
    html : pathlib.Path
        An edition's HTML folder.
    kind : {"student", "solution"}
        Which edition of the labs the book links.

    Returns
    -------
    list of pathlib.Path
        The files copied.

    Examples
    --------
    >>> with tempfile.TemporaryDirectory() as d:
    ...     (Path(d) / "labs").mkdir()
    ...     _ = (Path(d) / "labs" / "mlm-student.zip").write_bytes(b"zip")
    ...     [p.name for p in copy_lab_zips(Path(d) / "labs", Path(d) / "html", "student")]
    ['mlm-student.zip']
    """
    copied = []
    for path in sorted(Path(labs).glob(f"*-{kind}.zip")):
        (Path(html) / "labs").mkdir(parents=True, exist_ok=True)
        copied.append(Path(shutil.copy2(path, Path(html) / "labs" / path.name)))
    return copied


def _copy_labs(app, exception):
    if exception is None and app.builder.format == "html":
        copy_lab_zips(Path(app.srcdir) / LABS_DIR, Path(app.outdir), _lab_kind(app.config))


def _copy_mathjax(app, exception):
    if exception is None and app.builder.format == "html":
        source, target = mathjax_source(), Path(app.outdir) / "_static" / "mathjax"
        for part in _MATHJAX_PARTS:
            if (source / part).is_dir():
                shutil.copytree(source / part, target / part, dirs_exist_ok=True)
            elif (source / part).is_file():
                target.joinpath(part).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source / part, target / part)
        _dedupe_thebe(Path(app.outdir))


def _numbers(app, docname: str) -> dict[str, str]:
    """The page's numbers of a document's figures, tables and exercises: label -> "Fig. 6.2"."""
    formats = {"figure": "Fig. %s", "table": "Table %s", "exercise": "Exercise %s"}
    formats |= dict(getattr(app.config, "numfig_format", None) or {})
    out = {}
    for kind, labels in app.env.toc_fignumbers.get(docname, {}).items():
        for label, number in labels.items():
            out[label] = formats.get(kind, f"{kind.title()} %s") % ".".join(map(str, number))
    return out


def reader_downloads(app, exception) -> list[Path]:
    """Write each chapter's reader's notebook over every copy of it the built HTML offers; return them.

    Connected to ``build-finished``. A chapter is a document of ``book/chapters/`` built from a notebook;
    its copies are ``_sources/<docname>.ipynb`` (with the source-link suffix) and ``_downloads/*/<name>.ipynb``.
    In the student edition (``hide_solutions``) the notebook has no solution, nor has ``_downloads/*/<name>.py``.
    """
    import json

    import nbformat

    from . import reader

    if exception is not None or app.builder.format != "html":
        return []
    src, out = Path(app.srcdir), Path(app.outdir)
    student = bool(getattr(app.config, "hide_solutions", False))
    cite = reader.citation_formatter(src / "book" / "references.bib")
    suffix = getattr(app.config, "html_sourcelink_suffix", "") or ""
    written = []
    for docname in sorted(app.env.found_docs):
        notebook = src / f"{docname}.ipynb"
        if not docname.startswith("book/chapters/") or not notebook.is_file():
            continue
        results = notebook.with_name(f"{notebook.stem}.results.json")
        numbers = (
            json.loads(results.read_text(encoding="utf-8")).get("numbers", {}) if results.is_file() else {}
        )
        converter = reader.Converter(numbers, reader.Numbering(_numbers(app, docname)), cite, student=student)
        text = nbformat.writes(reader.reader_notebook(nbformat.read(notebook, as_version=4), converter))
        name = notebook.stem
        copies = [out / "_sources" / f"{docname}.ipynb{s}" for s in {suffix, ""}]
        copies += sorted((out / "_downloads").glob(f"*/{name}.ipynb"))
        for path in copies:
            if path.is_file():
                path.write_text(text, encoding="utf-8")
                written.append(path)
        if student:
            for path in sorted((out / "_downloads").glob(f"*/{name}.py")):
                path.write_text(
                    reader.strip_solutions_source(path.read_text(encoding="utf-8")), encoding="utf-8"
                )
                written.append(path)
    return written


#: The editions the overview of findings shows, each with where its chapters' results lie (relative to the
#: project root) and which chapters' findings it takes.
FINDINGS_EDITIONS = (
    ("embedded world", Path("book") / "chapters", "paper"),
    ("real data", Path("_build") / "real" / "src" / "book" / "chapters", "paper"),
    ("your replication", Path("book") / "chapters", "your-replication"),
)


def project_of(srcdir: Path) -> Path:
    """The project root of a book source folder (the real-data edition builds from ``_build/real/src``)."""
    srcdir = Path(srcdir).resolve()
    return srcdir.parents[2] if srcdir.parts[-3:] == ("_build", "real", "src") else srcdir


def findings_by_edition(root: Path, chapter_names: list[str]) -> tuple[list, dict]:
    """Every paper chapter's findings, and their verdicts in each edition built.

    Returns ``(rows, editions)``: ``rows`` are ``(chapter, finding record)`` in chapter order (the embedded
    world's, else the real edition's), one per finding of each chapter; ``editions`` maps an edition's name
    to a function ``(chapter, id) -> record or None`` for the editions whose results exist. your-replication's
    findings fill their own column, beside every paper chapter's finding of the same id.
    """
    import json

    editions: dict = {}
    rows: dict[tuple[str, str], dict] = {}
    for edition, folder, kind in FINDINGS_EDITIONS:
        found: dict[tuple[str, str], dict] = {}
        for name in chapter_names:
            if (name == "your-replication") != (kind == "your-replication"):
                continue
            path = root / folder / f"{name}.results.json"
            if path.is_file():
                for record in json.loads(path.read_text(encoding="utf-8")).get("findings", []):
                    found[(name, record["id"])] = record
        if not found:
            continue
        if kind == "paper":
            editions[edition] = lambda chapter, fid, found=found: found.get((chapter, fid))
            for key, record in found.items():
                rows.setdefault(key, record)
        else:  # the same finding tested on the user's sets: matched by its id
            by_id = {fid: record for (_, fid), record in found.items()}
            editions[edition] = lambda chapter, fid, by_id=by_id: by_id.get(fid)
    order = {name: i for i, name in enumerate(chapter_names)}
    return [(c, r) for (c, _), r in sorted(rows.items(), key=lambda kv: order.get(kv[0][0], 0))], editions


class FindingsOverview(SphinxDirective):
    """``{findings-overview}``: per paper, a table of the chapters' findings and their verdict in each edition.

    One row per finding (the chapter, the place, the statement), one column per edition whose results exist
    (the embedded world; the real-data edition once ``make book PARAMS=real`` has built it; your-replication's
    run where it tests the same finding), each verdict linked to the chapter section that shows it.
    """

    has_content = False

    def run(self):
        """Build the table from the chapters' ``results.json``."""
        from .project import chapters

        root = project_of(Path(self.env.srcdir))
        names = [c.name for c in chapters(root)]
        rows, editions = findings_by_edition(root, names)
        for _, folder, _ in FINDINGS_EDITIONS:
            for name in names:
                if (root / folder / f"{name}.results.json").is_file():
                    self.env.note_dependency(str(root / folder / f"{name}.results.json"))
        if not rows:
            return [nodes.paragraph(text="No chapter has recorded findings yet: build the book first.")]
        from .reader import citation_formatter

        cite = citation_formatter(root / "book" / "references.bib")
        papers = list(dict.fromkeys(record["paper"] for _, record in rows))  # in the book's order
        out = []
        for paper in papers:
            mine = [(c, r) for c, r in rows if r["paper"] == paper]
            counts: dict[str, int] = {}
            for _, r in mine:
                counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
            summary = ", ".join(f"{n} {v}" for v, n in counts.items())
            out.append(nodes.rubric(text=f"{cite('cite:t', paper)}: {len(mine)} findings ({summary})"))
            out.append(self._table(mine, editions))
        return out

    def _table(self, rows, editions):
        columns = ["chapter", "where", "finding", *editions]
        table = nodes.table(classes=["findings-overview"])
        group = nodes.tgroup(cols=len(columns))
        table += group
        for width in (12, 10, 44, *([12] * len(editions))):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        head += self._row([nodes.Text(c) for c in columns])
        body = nodes.tbody()
        group += body
        for chapter, record in rows:
            cells = [
                nodes.Text(chapter),
                nodes.Text(record["where"]),
                nodes.Text(f"{record['id']}: “{record['statement']}”"),
            ]
            for edition, lookup in editions.items():
                entry = lookup(chapter, record["id"])
                where = "your-replication" if edition == "your replication" else chapter
                cells.append(self._verdict(where, entry) if entry else nodes.Text("—"))
            body += self._row(cells)
        return table

    @staticmethod
    def _row(cells):
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += nodes.paragraph("", "", cell)
            row += entry
        return row

    def _verdict(self, chapter: str, record: dict):
        target = f"book/chapters/{chapter}"
        uri = self.env.app.builder.get_relative_uri(self.env.docname, target)
        anchor = nodes.make_id(record.get("section", "")) if record.get("section") else ""
        return nodes.reference("", record["verdict"], refuri=uri + (f"#{anchor}" if anchor else ""))


class glued_table(nodes.figure):  # noqa: N801 (docutils names node classes in lower case)
    """A glued output placed as a table: a figure node that Sphinx enumerates with the tables."""


_HEADING = re.compile(r"(<th\b[^>]*>)(.*?)(</th>)", re.DOTALL)


def wrappable_headings(html: str) -> str:
    """The table's HTML with a line-break opportunity (``<wbr>``) after each underscore of a heading.

    A ``<wbr>`` is no character: the heading reads, and copies, as written.

    Parameters
    ----------
    html : str
        HTML of a table (pandas' ``DataFrame`` or ``Styler`` output).

    Returns
    -------
    str
        The same HTML, ``_`` followed by ``<wbr>`` in the text of every ``<th>``; attributes unchanged.

    Examples
    --------
    >>> wrappable_headings('<th class="row_heading">timm vit_p4_d4</th><td>a_b</td>')
    '<th class="row_heading">timm vit_<wbr>p4_<wbr>d4</th><td>a_b</td>'
    """
    return _HEADING.sub(lambda m: m[1] + m[2].replace("_", "_<wbr>") + m[3], html)


class GluedTables(SphinxTransform):
    """Turn ``glue:figure`` nodes named ``tbl-…`` into :class:`glued_table` nodes.

    Their headings may break after an underscore (:func:`wrappable_headings`).
    """

    default_priority = 900

    def apply(self, **kwargs):
        """Turn every glued figure named ``tbl-*`` into a numbered table."""
        for figure in list(self.document.findall(nodes.figure)):
            if type(figure) is not nodes.figure or not any(i.startswith("tbl-") for i in figure["ids"]):
                continue
            table = glued_table(figure.rawsource, *figure.children, **figure.attributes)
            table["classes"].append("glued-table")  # scrolls when wide (static/shifteval.css)
            table.source, table.line = figure.source, figure.line
            for raw in list(table.findall(nodes.raw)):
                if "html" in raw.get("format", "").split():
                    raw.replace_self(
                        nodes.raw(raw.rawsource, wrappable_headings(raw.astext()), format=raw["format"])
                    )
            figure.replace_self(table)
            for node_id in table["ids"]:  # where Sphinx looks labels up
                self.document.ids[node_id] = table


def _visit_glued_table(self, node):
    self.visit_figure(node)


def _depart_glued_table(self, node):
    self.depart_figure(node)


def _dedupe_thebe(outdir: Path) -> None:
    """Keep one copy of sphinx-thebe's inline configuration script per page.

    It is registered twice under Jupyter Book, and a second ``const THEBE_JS_URL`` is a JavaScript error on every page.
    """
    for page in outdir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        start = text.find("<script>const THEBE_JS_URL")
        if start < 0:
            continue
        block = text[start : text.index("</script>", start) + len("</script>")]
        if text.count(block) > 1:
            head, tail = text[: start + len(block)], text[start + len(block) :]
            page.write_text(head + tail.replace(block, ""), encoding="utf-8")


def _own_document(app, doctree) -> int:
    """Point every node of ``doctree`` that names another ``document`` at its page's document; how many.

    A node whose ``_document`` is unset reads its parent's (docutils' ``Node.document``), so unsetting it
    leaves the node's document the page's own, and the foreign document (with the build environment in
    its settings) is no longer pickled with the page (``doctree-read``: "the doctree before being pickled").

    Examples
    --------
    >>> from docutils.utils import new_document
    >>> page, other = new_document("page"), new_document("other")
    >>> para = nodes.paragraph(); other += para; para += nodes.strong()
    >>> page += para  # the paragraph moves to the page; its child still names the other document
    >>> para[0].document is other
    True
    >>> _own_document(None, page), para[0].document is page
    (1, True)
    """
    foreign = [
        node for node in doctree.findall() if node._document is not None and node._document is not doctree
    ]
    for node in foreign:
        node._document = None
    return len(foreign)


def _escape_bars(app, what, name, obj, options, lines):
    """Docstrings write absolute values as ``|x|``; outside literals RST would read a substitution.

    Connected to ``autodoc-process-docstring`` for the library reference page.
    """
    for i, line in enumerate(lines):
        parts = line.split("``")
        lines[i] = "``".join(p if k % 2 else p.replace("|", "\\|") for k, p in enumerate(parts))


def setup(app):
    """Register the extension with Sphinx."""
    app.setup_extension("sphinx.ext.autodoc")  # for the library reference page (book/api.md)
    app.add_enumerable_node(glued_table, "table", html=(_visit_glued_table, _depart_glued_table))
    app.add_css_file("shifteval.css")
    app.add_transform(GluedTables)
    app.connect("config-inited", _configure, priority=900)
    app.connect("build-finished", _copy_mathjax)
    app.connect("build-finished", _copy_labs)
    app.connect("build-finished", reader_downloads)
    app.add_role("lab", lab_role)
    app.add_directive("findings-overview", FindingsOverview)
    app.connect("autodoc-process-docstring", _escape_bars)
    app.connect("doctree-read", _own_document)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
