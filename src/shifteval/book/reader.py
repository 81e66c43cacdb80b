"""The notebook a reader downloads: the executed chapter as it reads on its page, in plain Jupyter markdown.

A chapter's executed notebook (``book/chapters/<chapter>.ipynb``) is written for the book: its markdown
holds MyST roles and directives (``{cite:t}``, ``{numref}``, a ``glue:figure`` that places a figure with
its caption) and its figures are glued (``application/papermill.record/image/png``), which Jupyter does not
show. :func:`reader_notebook` turns it into the notebook the page offers for download:

- every MyST role becomes the text the page shows (a citation ``Recht et al. (2019)``, a reference
  ``Figure 2.1``, a glossary term its word, a glued number its value);
- every directive becomes plain markdown: a glued figure or table its caption (``**Figure 2.1.** …``),
  an exercise a bold heading, a solution a ``<details>`` block (left out of the student edition), an
  admonition a quoted block;
- a glued figure or table becomes a visible output of the cell that made it (``image/png``,
  ``text/html``); a glued number, which the prose quotes, is dropped from the outputs;
- the book's bookkeeping cells (``remove-cell``; ``remove-input`` for the input alone) are collapsed in
  Jupyter (``jupyter.source_hidden`` and ``outputs_hidden``), not deleted.

The book's Sphinx extension (:mod:`shifteval.book.sphinxext`) writes it, with the page's own figure,
table and exercise numbers, over every copy of the notebook the built HTML offers for download.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from pathlib import Path

#: The prefix myst-nb's ``glue`` gives the MIME types of a glued output (hidden where it is glued).
GLUE_PREFIX = "application/papermill.record/"

#: Roles whose content is shown as it is written (the word or phrase before an optional ``<target>``).
_TEXT_ROLES = {"term", "doc", "ref", "download", "abbr", "sub", "sup", "guilabel", "kbd", "file"}

ROLE = re.compile(r"\{(?P<role>[A-Za-z][\w:.-]*)\}`(?P<content>[^`]*)`")
_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:.-]+)\}[ \t]*(?P<arg>.*)$")
_OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")
_LABELLED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)

#: What each kind of numbered element is called on the page.
KIND_WORDS = {"figure": "Figure", "table": "Table", "exercise": "Exercise"}


class Numbering:
    """The numbers the page gives a chapter's figures, tables and exercises.

    Parameters
    ----------
    numbers : mapping, optional
        Label -> number as the page shows it (``{"fig-mlm-matrix": "Figure 6.2"}``), e.g. from Sphinx's
        ``env.toc_fignumbers``. A label not given is numbered in order of appearance within its kind
        (``Figure 1``, ``Figure 2``, …).

    Examples
    --------
    >>> n = Numbering({"fig-b": "Figure 6.2"})
    >>> n.number("fig-b", "figure"), n.number("fig-a", "figure"), n.number("tbl-a", "table")
    ('Figure 6.2', 'Figure 1', 'Table 1')
    """

    def __init__(self, numbers: Mapping[str, str] | None = None):
        self.numbers = dict(numbers or {})
        self._count: dict[str, int] = {}

    def number(self, label: str, kind: str) -> str:
        """The number of ``label`` (a ``kind`` of :data:`KIND_WORDS`), assigned on first sight when unknown."""
        if label not in self.numbers:
            self._count[kind] = self._count.get(kind, 0) + 1
            self.numbers[label] = f"{KIND_WORDS.get(kind, kind.title())} {self._count[kind]}"
        return self.numbers[label]


def citation_formatter(bib: str | Path | None) -> Callable[[str, str], str]:
    """A function that writes a citation role as the page does (author–year style).

    Parameters
    ----------
    bib : str or pathlib.Path or None
        The book's BibTeX file; ``None`` (or a missing file) writes the keys themselves.

    Returns
    -------
    callable
        ``cite(role, keys)``: ``role`` is ``cite:t`` (``Recht et al. (2019)``), ``cite:p``
        (``(Recht et al., 2019)``) or ``cite``; ``keys`` comma-separated.

    Examples
    --------
    >>> cite = citation_formatter(None)
    >>> cite("cite:t", "recht2019imagenet")
    'recht2019imagenet'
    """
    entries: dict[str, tuple[str, str]] = {}
    if bib is not None and Path(bib).is_file():
        from pybtex.database import parse_file

        for key, entry in parse_file(str(bib), bib_format="bibtex").entries.items():
            people = entry.persons.get("author", [])
            last = [" ".join(p.last_names) for p in people]
            names = (
                last[0]
                if len(last) == 1
                else f"{last[0]} and {last[1]}"
                if len(last) == 2
                else f"{last[0]} et al."
                if last
                else key
            )
            entries[key] = (_detex(names), entry.fields.get("year", "n.d."))

    def cite(role: str, keys: str) -> str:
        wanted = [k.strip() for k in keys.split(",") if k.strip()]
        if not wanted or any(k not in entries for k in wanted):
            return keys
        found = [entries[k] for k in wanted]
        if role == "cite:t":
            return "; ".join(f"{names} ({year})" for names, year in found)
        return "(" + "; ".join(f"{names}, {year}" for names, year in found) + ")"

    return cite


def _detex(text: str) -> str:
    r"""BibTeX's accents and braces as plain text (``{\"u}`` -> ``ü``)."""
    accents = {'\\"': "\u0308", "\\'": "\u0301", "\\`": "\u0300", "\\^": "\u0302", "\\~": "\u0303"}
    for mark, combining in accents.items():
        text = re.sub(re.escape(mark) + r"\{?([A-Za-z])\}?", r"\g<1>" + combining, text)
    import unicodedata

    return unicodedata.normalize("NFC", text.replace("{", "").replace("}", ""))


class Converter:
    r"""MyST markdown of a chapter to the markdown Jupyter renders (see the module's description).

    Parameters
    ----------
    numbers : mapping, optional
        Glued numbers (``results.json``'s ``numbers``) that ``{glue:md}`key``` roles stand for.
    numbering : Numbering, optional
        The page's figure, table and exercise numbers.
    cite : callable, optional
        :func:`citation_formatter`'s result.
    student : bool
        Leave the exercises' solutions out (the student edition).

    Examples
    --------
    >>> c = Converter(numbers={"n": "1,000"})
    >>> c.markdown("We drew {glue:md}`n` samples ({numref}`fig-x`; see the {term}`linear fit`).")
    'We drew 1,000 samples (Figure 1; see the linear fit).'
    >>> print(c.markdown("```{glue:figure} x\n:name: fig-x\n\n**Drops.** One per model.\n```"))
    **Figure 1.** **Drops.** One per model.
    >>> Converter(student=True).markdown("A.\n\n````{solution} ex-1\n:class: dropdown\nB.\n````\n\nC.")
    'A.\n\nC.'

    """

    def __init__(self, numbers=None, numbering: Numbering | None = None, cite=None, student: bool = False):
        self.numbers = dict(numbers or {})
        self.numbering = numbering or Numbering()
        self.cite = cite or citation_formatter(None)
        self.student = student

    # -- roles -------------------------------------------------------------------------------------
    def role(self, name: str, content: str) -> str:
        """One role as the page shows it."""
        if name.startswith("glue"):
            key = content.strip()
            if key not in self.numbers:
                raise ValueError(f"{{{name}}}`{key}`: no glued number {key!r} was recorded by the run")
            return self.markdown(self.numbers[key])
        if name.startswith("cite"):
            return self.cite(name, content)
        if name in ("numref", "ref", "eq"):
            match = _LABELLED.match(content)
            label = match["target"] if match else content
            kind = {"fig": "figure", "tbl": "table"}.get(label.split("-", 1)[0], "figure")
            number = self.numbering.number(label, kind) if name != "ref" or not match else match["text"]
            if match and name == "numref":
                return match["text"].replace("%s", number.split(" ", 1)[-1]).replace("{number}", number)
            return number
        if name in ("math",):
            return f"${content}$"
        if name.startswith("py:") or name in ("func", "class", "meth", "mod", "attr", "obj"):
            return f"`{content.lstrip('~')}`"
        if name == "lab":
            return f"the lab `{content}`"
        match = _LABELLED.match(content)
        return match["text"] if match and name in _TEXT_ROLES else content

    def roles(self, text: str) -> str:
        """Every role of ``text`` replaced (code spans and math left as they are)."""
        return ROLE.sub(lambda m: self.role(m["role"], m["content"]), text)

    # -- directives --------------------------------------------------------------------------------
    def markdown(self, text: str) -> str:
        """A MyST markdown text as plain markdown."""
        lines = text.split("\n")
        out: list[str] = []
        removed = False
        i = 0
        while i < len(lines):
            match = _OPEN.match(lines[i])
            if match is None:
                out.append(self.roles(lines[i]))
                i += 1
                continue
            end = self._close(lines, i, match)
            options, body = _options(lines[i + 1 : end])
            rendered = self.directive(match["name"], match["arg"].strip(), options, "\n".join(body))
            if rendered is not None:
                out.extend(match["indent"] + line if line else line for line in rendered.split("\n"))
            removed |= rendered is None
            i = end + 1
        joined = "\n".join(out)
        return re.sub(r"\n{3,}", "\n\n", joined) if removed else joined

    @staticmethod
    def _close(lines: list[str], start: int, match: re.Match) -> int:
        """The index of the line that closes the directive opened at ``start`` (nested ones skipped)."""
        fence = match["fence"]
        depth = 0
        for j in range(start + 1, len(lines)):
            stripped = lines[j].strip()
            inner = _OPEN.match(lines[j])
            if inner is not None and inner["fence"][0] == fence[0] and len(inner["fence"]) == len(fence):
                depth += 1
            elif stripped == fence or (
                stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence)
            ):
                if depth == 0:
                    return j
                depth -= 1
        raise ValueError(f"directive {{{match['name']}}} opened with {fence} is never closed")

    def directive(self, name: str, arg: str, options: dict, body: str) -> str | None:
        """One directive as plain markdown (``None``: nothing is shown)."""
        if name in ("glue:figure", "glue:any", "glue"):
            label = options.get("name", arg)
            kind = "table" if label.startswith("tbl-") else "figure"
            caption = self.markdown(body).strip()
            return f"**{self.numbering.number(label, kind)}.** {caption}" if caption else ""
        if name == "table":
            label = options.get("name", "")
            number = self.numbering.number(label or f"tbl-{arg[:20]}", "table")
            return f"**{number}.** {self.roles(arg)}\n\n{self.markdown(body)}"
        if name == "exercise":
            number = self.numbering.number(options.get("label", arg), "exercise")
            return f"**{number}.**{(' ' + self.roles(arg)) if arg else ''}\n\n{self.markdown(body)}"
        if name == "solution":
            if self.student:
                return None
            number = self.numbering.number(arg, "exercise") if arg else "the exercise"
            return f"<details><summary>Solution to {number}</summary>\n\n{self.markdown(body)}\n\n</details>"
        if name in ("math",):
            return f"$$\n{body}\n$$"
        title = self.roles(arg) if arg else name.title()
        quoted = "\n".join(f"> {line}" if line else ">" for line in self.markdown(body).split("\n"))
        return f"> **{title}**\n>\n{quoted}"


def _options(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    """A directive's ``:key: value`` options (its first lines) and the rest of its body."""
    options: dict[str, str] = {}
    i = 0
    while i < len(lines):
        match = _OPTION.match(lines[i])
        if match is None:
            break
        options[match["key"]] = match["value"].strip()
        i += 1
    return options, lines[i:]


def _visible(output: dict) -> dict | None:
    """A glued output as Jupyter shows it: a figure or a table; ``None`` for a glued number or text."""
    data = output.get("data", {})
    if not any(k.startswith(GLUE_PREFIX) for k in data):
        return output
    plain = {k[len(GLUE_PREFIX) :]: v for k, v in data.items() if k.startswith(GLUE_PREFIX)}
    if not {"image/png", "image/svg+xml", "text/html"} & set(plain):
        return None  # a glued number: the prose shows it
    shown = copy.deepcopy(output)
    shown["data"] = plain
    shown["metadata"] = {k: v for k, v in output.get("metadata", {}).items() if k != "scrapbook"}
    return shown


#: Cell tags of the book and how Jupyter is told to show such a cell.
_COLLAPSE = {
    "remove-cell": {"source_hidden": True, "outputs_hidden": True},
    "remove-input": {"source_hidden": True},
    "hide-input": {"source_hidden": True},
    "remove-output": {"outputs_hidden": True},
    "hide-output": {"outputs_hidden": True},
}


def reader_notebook(nb, converter: Converter):
    r"""The notebook a reader downloads, made from a chapter's executed notebook (which is not changed).

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The executed chapter as the book renders it.
    converter : Converter
        Glued numbers, the page's numbering and citations, and the edition.

    Returns
    -------
    nbformat.NotebookNode
        A new notebook: plain markdown, visible figures and tables, bookkeeping cells collapsed (in the
        student edition without their outputs but figures: a check there may state a solution).

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_code_cell("R.figure('f', fig)", metadata={"tags": ["remove-input"]}, outputs=[
    ...         nbformat.v4.new_output("display_data", data={GLUE_PREFIX + "image/png": "iVBO",
    ...                                                      GLUE_PREFIX + "text/plain": "<Figure>"})]),
    ...     nbformat.v4.new_markdown_cell("```{glue:figure} f\n:name: fig-f\n\nA caption.\n```")])
    >>> out = reader_notebook(nb, Converter())
    >>> list(out.cells[0].outputs[0].data), out.cells[0].metadata.jupyter, out.cells[1].source
    (['image/png', 'text/plain'], {'source_hidden': True}, '**Figure 1.** A caption.')
    """
    out = copy.deepcopy(nb)
    for cell in out.cells:
        if cell.cell_type == "markdown":
            cell.source = converter.markdown(cell.source)
            continue
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.get("outputs", []):
            shown = _visible(output)
            if shown is None:
                continue
            if "text/markdown" in shown.get("data", {}):
                shown["data"]["text/markdown"] = converter.markdown(_text(shown["data"]["text/markdown"]))
            outputs.append(shown)
        tags = set(cell.metadata.get("tags", []))
        if converter.student and "remove-cell" in tags:
            # a bookkeeping cell's check shows its sentence, and a solution's sentence is no student's to see
            outputs = [o for o in outputs if _is_figure(o)]
        cell.outputs = outputs
        collapse: dict[str, bool] = {}
        for tag in sorted(tags & set(_COLLAPSE)):
            collapse |= _COLLAPSE[tag]
        if collapse.get("outputs_hidden") and any(_is_figure(o) for o in outputs):
            del collapse["outputs_hidden"]  # a figure the page shows stays in view
        if collapse:
            cell.metadata["jupyter"] = {**cell.metadata.get("jupyter", {}), **collapse}
    # Jupyter numbers nothing: the numbers the page gives are written out where they are used
    out.metadata.pop("widgets", None)
    return out


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _is_figure(output: dict) -> bool:
    return bool({"image/png", "image/svg+xml", "text/html"} & set(output.get("data", {})))


GLUE_ROLE = re.compile(r"\{glue(?::md|:text)?\}`(?P<key>[^`]*)`")


def resolve_glue(nb, numbers: Mapping[str, str]) -> None:
    """Write each glued number into the markdown that quotes it (``{glue:md}`key```), in place.

    The page shows the same text (the role parses the glued markdown where it stands); the notebook then
    reads with its numbers in Jupyter too. Markdown cells and markdown outputs are both resolved.

    Raises
    ------
    ValueError
        For a key the run never glued (the message names it).

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("n = {glue:md}`n`.")])
    >>> resolve_glue(nb, {"n": "1,000"}); nb.cells[0].source
    'n = 1,000.'
    """

    def one(match: re.Match) -> str:
        key = match["key"].strip()
        if key not in numbers:
            raise ValueError(f"{{glue:md}}`{key}`: the run glued no number {key!r}")
        return numbers[key]

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = GLUE_ROLE.sub(one, cell.source)
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text/markdown" in data:
                data["text/markdown"] = GLUE_ROLE.sub(one, _text(data["text/markdown"]))


def strip_solutions_source(text: str) -> str:
    r"""A chapter's jupytext source without its exercises' solutions (the student edition's download).

    Parameters
    ----------
    text : str
        The ``py:percent`` source, whose markdown cells are comment lines (each begins with ``#``).

    Returns
    -------
    str
        The same source with every ``{solution}`` directive of its markdown removed.

    Examples
    --------
    >>> src = "# %% [markdown]\n# An exercise.\n#\n# ````{solution} ex\n# :class: dropdown\n# Secret.\n# ````\n"
    >>> print(strip_solutions_source(src))
    # %% [markdown]
    # An exercise.
    #
    <BLANKLINE>
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        body = lines[i][2:] if lines[i].startswith("# ") else None
        match = _OPEN.match(body) if body is not None else None
        if match is None or match["name"] != "solution":
            out.append(lines[i])
            i += 1
            continue
        plain = [line[2:] if line.startswith("# ") else line.lstrip("#") for line in lines[i:]]
        i += Converter._close(plain, 0, match) + 1
    return "\n".join(out)
