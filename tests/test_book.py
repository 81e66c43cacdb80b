"""The book as `make book` builds it: every chapter executes, the book builds warning-free, in a browser too."""

import json
import re
import shutil

import pytest
from conftest import _locked, shifteval, static_server

from shifteval.book.project import chapters

# Reading built pages, rebuilding the HTML and browsing use one core: the thread test's re-runs go on
# beside these tests (tests/background.py).
pytestmark = pytest.mark.one_core

CHAPTERS = [c.name for c in chapters()]


def test_the_book_builds_without_warnings(built_book):
    project, out = built_book
    assert out.returncode == 0, out.stderr[-4000:]
    assert (project / "_build" / "html" / "index.html").is_file()
    log = out.stdout + out.stderr
    assert "WARNING" not in log and "build succeeded" in log
    for name in CHAPTERS:
        assert (project / "_build" / "html" / "book" / "chapters" / f"{name}.html").is_file(), name


def test_a_build_with_nothing_changed_skips_the_html_and_an_edited_page_rebuilds_it(built_book):
    project, _ = built_book
    with _locked(project.parent / "book-inputs.lock"):  # no other test builds the book while a page is edited
        _edit_a_page_and_rebuild(project)


def _edit_a_page_and_rebuild(project):
    html = project / "_build" / "html"
    page, built = project / "book" / "reproducing.md", html / "book" / "reproducing.html"
    again = shifteval("build", cwd=project)  # every chapter keeps its run
    assert again.returncode == 0 and "[book] up to date" in again.stderr, again.stderr[-2000:]
    original = page.read_text()
    try:
        page.write_text(original + "\nA sentence added after the first build.\n")
        edited = shifteval("build", cwd=project)
        assert edited.returncode == 0, edited.stderr[-3000:]
        assert "[book] up to date" not in edited.stderr
        assert "A sentence added after the first build." in built.read_text(encoding="utf-8")
    finally:  # the other tests read this book: put the page and its HTML back
        page.write_text(original)
        restored = shifteval("build", cwd=project)
    assert restored.returncode == 0 and "A sentence added" not in built.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_chapter_executes_and_records_results(built_book, name):
    project, out = built_book
    nb = json.loads((project / "book" / "chapters" / f"{name}.ipynb").read_text())
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors
    res = json.loads((project / "book" / "chapters" / f"{name}.results.json").read_text())
    assert res["provenance"]["chapter"] == name and res["provenance"]["parameter_set"] == "default"


def test_every_figure_reads_at_the_content_width(built_book):
    from shifteval.viz.common import MAX_PANELS_PER_ROW, MIN_TEXT_PX, legibility_problems

    project, _ = built_book
    failures, measured = [], 0
    for name in CHAPTERS:
        figures = json.loads((project / "book" / "chapters" / f"{name}.results.json").read_text())["figures"]
        for key, trace in figures.items():
            if trace["kind"] != "figure":
                continue
            record = trace.get("legibility")
            if record is None:
                failures.append(f"{name}: {key}: no legibility record")
                continue
            measured += 1
            failures += [f"{name}: {key}: {problem} ({record})" for problem in legibility_problems(record)]
    assert measured > 0
    assert not failures, (
        f"figures must have text of at least {MIN_TEXT_PX} px at the content width, at most "
        f"{MAX_PANELS_PER_ROW} panels per row and no colliding panels:\n" + "\n".join(failures)
    )


def test_warm_build_skips_every_chapter(built_book):
    project, _ = built_book
    with _locked(project.parent / "book-inputs.lock"):  # not while another test edits a page
        out = shifteval("build", "--params", "default", cwd=project)
    assert out.returncode == 0, out.stderr[-3000:]
    assert [name for name in CHAPTERS if f"[{name}] up to date" in out.stderr] == CHAPTERS
    assert "executing" not in out.stderr
    changed = [line for line in out.stderr.splitlines() if "changed since the last build" in line]
    assert "[book] up to date" in out.stderr, changed  # nor is the HTML rendered again


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Elements of the article that run past its text column, or scroll sideways inside it (a table or a code
# block wider than the column), the outermost of each nest; inline elements cannot scroll and are skipped.
OVERFLOW_JS = """(() => {
  const article = document.querySelector('article') || document.querySelector('main') || document.body;
  if (!article) return [];
  const column = (article.querySelector('section') || article).getBoundingClientRect();
  const found = [];
  for (const el of article.querySelectorAll('*')) {
    const r = el.getBoundingClientRect(), style = getComputedStyle(el);
    if (r.width === 0 || r.height === 0 || style.display === 'inline') continue;
    const scrolls = style.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1;
    if (scrolls || r.right > column.right + 1) found.push(el);
  }
  return found.filter(el => !found.some(o => o !== el && o.contains(el))).map(el =>
    `${el.tagName.toLowerCase()}.${String(el.className).split(' ')[0]}: ${el.scrollWidth} px in `
    + `${Math.round(column.width)} px: ${(el.innerText || '').slice(0, 60).replace(/\\s+/g, ' ')}`);
})()"""


def _browse(html_root, shots, base_url=None, full_page=False, api=True, only=None):
    """Open every page of a built book in headless Chromium with networking off; report per page.

    Pages are opened from the file system, or with ``base_url`` from a static web server serving
    ``html_root`` (the only address the browser may then reach). Each page is saved as a screenshot
    under ``shots`` (the whole page with ``full_page``, except the library reference's pages; else the
    first screen) for a review by eye.
    ``api=False`` leaves out the library reference (``book/api/``), whose pages are the same in every
    edition; ``only`` (paths relative to ``html_root``) opens those pages alone.
    """
    from playwright.sync_api import sync_playwright

    pages = sorted(
        p
        for p in html_root.rglob("*.html")
        if "_static" not in p.parts
        and "_sources" not in p.parts
        and 'http-equiv="Refresh"' not in p.read_text(encoding="utf-8")  # the root index only redirects
        and (api or not p.relative_to(html_root).as_posix().startswith("book/api/"))
        and (only is None or p.relative_to(html_root).as_posix() in only)
    )
    shots.mkdir(parents=True, exist_ok=True)
    report = {}

    def local(url):
        return base_url is not None and url.startswith(base_url)

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
        )
        context = browser.new_context(offline=base_url is None, viewport={"width": 1280, "height": 900})
        # nothing leaves the machine
        context.route(
            re.compile(r"^https?://"),
            lambda route: route.continue_() if local(route.request.url) else route.abort(),
        )
        # one tab opens every page in turn (a navigation leaves nothing of the last page's scripts)
        page = context.new_page()
        errors: list[str] = []
        remote: list[str] = []
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on(
            "request",
            lambda req: remote.append(req.url) if req.url.startswith("http") and not local(req.url) else None,
        )
        for path in pages:
            errors.clear()
            remote.clear()
            relative = path.relative_to(html_root).as_posix()
            page.goto(path.as_uri() if base_url is None else base_url + relative, wait_until="load")
            has_math = page.evaluate("document.querySelectorAll('.math').length") > 0
            if has_math:  # MathJax 3: typesetting is done when its startup promise resolves
                page.wait_for_function(
                    "window.MathJax && MathJax.startup && MathJax.startup.promise",
                    timeout=0,  # no limit
                )
                page.evaluate("MathJax.startup.promise.then(() => true)")
            report[relative] = {
                "errors": list(errors),
                "remote_requests": list(remote),
                "broken_images": page.evaluate(
                    "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
                ),
                "images": page.evaluate("document.images.length"),
                "math": has_math,
                "math_rendered": page.evaluate("document.querySelectorAll('mjx-container svg').length"),
                "math_errors": page.evaluate(
                    "document.querySelectorAll('mjx-merror, [data-mml-node=merror]').length"
                ),
                # TeX source left in the reading text (outside code and typeset math): math that did not render
                "raw_tex": re.findall(
                    r".{0,30}(?:\$|\\[a-zA-Z]+).{0,30}",
                    page.evaluate(
                        "(() => { const c = (document.querySelector('main') || document.body).cloneNode(true);"
                        " c.querySelectorAll('pre, code, mjx-container, script, style').forEach(e => e.remove());"
                        " return c.innerText; })()"
                    ),
                ),
                "exercises": page.evaluate("document.querySelectorAll('.exercise').length"),
                "solutions": page.evaluate("document.querySelectorAll('.solution').length"),
                "text": page.evaluate("document.body.innerText"),
                "overflow": page.evaluate(OVERFLOW_JS),
            }
            name = relative.replace("/", "__").removesuffix(".html")
            whole = full_page and not relative.startswith("book/api/")  # the reference: its first screen
            page.screenshot(path=str(shots / f"{name}.png"), full_page=whole)
        browser.close()
    return report


#: The pages make test opens in a browser: every chapter, the narrative pages, two library pages.
SAMPLE = [
    "book/intro.html", "book/reproduction.html", "book/reproducing.html", "book/teaching.html",
    "book/api/linfit/fits.html", "book/api/machinery/results.html",
    *[f"book/chapters/{name}.html" for name in CHAPTERS],
]  # fmt: skip


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (.ci/run installs Debian's chromium)")
def test_book_in_a_browser_on_a_sample_of_pages(built_book, student_book):
    """The chapters and a sample of the other pages, in both editions and served over HTTP (make test;
    make test-all opens every page)."""
    from conftest import ROOT

    project, _ = built_book
    shots = ROOT / "_build" / "screenshots"
    reports = {"full": _browse(project / "_build" / "html", shots / "full", only=SAMPLE)}
    reports["student"] = _browse(student_book, shots / "student", only=SAMPLE)
    with static_server(project / "_build" / "html") as base_url:  # the same book from a web server
        served = _browse(project / "_build" / "html", shots / "served", base_url, only=SAMPLE[:2])
    reports["full, served"] = served
    assert len(reports["full"]) >= len(SAMPLE) - 2, sorted(reports["full"])  # a page renamed: update SAMPLE
    _check_browsed(reports)


@pytest.mark.heavy
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (.ci/run installs Debian's chromium)")
def test_book_in_a_browser_full_and_student_editions(built_book, student_book):
    """Every page of the full edition, with full-page screenshots for a review by eye; every page of the
    student edition and of the full edition served over HTTP but the library reference."""
    from conftest import ROOT

    project, _ = built_book
    shots = ROOT / "_build" / "screenshots"
    reports = {"full": _browse(project / "_build" / "html", shots / "full", full_page=True)}
    reports["student"] = _browse(student_book, shots / "student", api=False)
    with static_server(project / "_build" / "html") as base_url:  # the same book from a web server
        reports["full, served"] = _browse(project / "_build" / "html", shots / "served", base_url, api=False)
    assert any(page.startswith("book/api/") for page in reports["full"]), sorted(reports["full"])
    _check_browsed(reports)


def _check_browsed(reports: dict) -> None:
    """No console error, remote request or broken image, math typeset, nothing wider than the column;
    chapters with their exercises, images and provenance; solutions in the full edition only."""
    for edition, report in reports.items():
        for page, r in report.items():
            where = f"{edition}: {page}"
            assert not r["errors"], (where, r["errors"])
            assert not r["remote_requests"], (where, r["remote_requests"])
            assert not r["broken_images"], (where, r["broken_images"])
            if r["math"]:
                assert r["math_rendered"] > 0 and r["math_errors"] == 0, where
            assert not r["raw_tex"], (where, r["raw_tex"])
            assert not r["overflow"], (where, r["overflow"])  # nothing wider than the text column
        for name in CHAPTERS:
            if f"book/chapters/{name}.html" not in report:
                continue  # the served sample
            r = report[f"book/chapters/{name}.html"]
            assert r["exercises"] >= 3, (edition, name)
            assert r["images"] >= 1, (edition, name)
            assert "Provenance of this page" in r["text"], (edition, name)
    # solutions: in dropdowns in the full edition, absent from the student edition
    for name in CHAPTERS:
        full, student = (
            reports["full"][f"book/chapters/{name}.html"],
            reports["student"][f"book/chapters/{name}.html"],
        )
        assert full["solutions"] >= 3 and student["solutions"] == 0, name
        assert "Solution to Exercise" in full["text"] and "Solution to Exercise" not in student["text"], name
    assert (
        reports["full"]["book/intro.html"]["math"] is False
        or reports["full"]["book/intro.html"]["math_rendered"] > 0
    )


def test_no_local_path_reaches_a_page_or_a_download(built_book):
    import sys
    from pathlib import Path

    project, out = built_book
    assert out.returncode == 0, out.stderr[-3000:]
    local = {str(project), str(project.resolve()), sys.prefix, str(Path.home())}
    leaks = []
    for page in (project / "_build" / "html").rglob("*"):
        if page.is_file() and page.suffix in (".html", ".ipynb", ".py", ".txt", ".js", ".json"):
            text = page.read_text(encoding="utf-8", errors="replace")
            leaks += [(page.name, p) for p in local if p in text]
    assert not leaks, leaks[:10]


def _plain(text: str) -> str:
    """Text as a reader sees it, with Sphinx's smart quotes and dashes undone and markdown marks removed."""
    for a, b in (("’", "'"), ("‘", "'"), ("“", '"'), ("”", '"'), ("…", "..."), ("---", "-"), ("--", "-"),
                 ("—", "-"), ("–", "-"), ("*", ""), ("`", "")):  # fmt: skip
        text = text.replace(a, b)
    return " ".join(text.split())


def test_every_chapter_records_claims_and_shows_their_text(built_book):
    import html as html_lib

    project, out = built_book
    assert out.returncode == 0, out.stderr[-3000:]
    for name in CHAPTERS:
        res = json.loads((project / "book" / "chapters" / f"{name}.results.json").read_text())
        claims = res.get("claims", [])
        assert len(claims) >= 6, (name, len(claims))
        page = (project / "_build" / "html" / "book" / "chapters" / f"{name}.html").read_text(
            encoding="utf-8"
        )
        blocks = re.sub(r"</?(p|li|div|br|td|th|tr|h\d|dd|dt|section|ul|ol|pre)\b[^>]*>", " ", page)
        text = _plain(html_lib.unescape(re.sub(r"<[^>]+>", "", blocks)))
        for claim in claims:
            # a cross-reference ({numref}`tbl-x`) shows as its number ("Table 2.3"), math ($1/n$) as MathJax
            # source: the parts around them, in order
            parts = [_plain(p) for p in re.split(r"\{\w+\}`[^`]*`|\$[^$]+\$", claim["text"])]
            pattern = r"\s*\S+\s*\S*\s*".join(re.escape(p) for p in parts)
            assert re.search(pattern, text), (name, claim["id"], claim["text"])


def test_no_chapter_cell_shows_a_bare_python_value(built_book):
    # A cell's output is prose, a figure or a table; a recorded dict or a glued number's repr is not.
    project, out = built_book
    assert out.returncode == 0, out.stderr[-3000:]
    for name in CHAPTERS:
        nb = json.loads((project / "book" / "chapters" / f"{name}.ipynb").read_text())
        for i, cell in enumerate(nb["cells"]):
            if "remove-cell" in cell["metadata"].get("tags", []) or "remove-output" in cell["metadata"].get(
                "tags", []
            ):
                continue
            for o in cell.get("outputs", []):
                glued = all(k.startswith("application/papermill.record/") for k in o.get("data", {}))
                if o["output_type"] in ("execute_result", "display_data") and not glued:
                    rich = {"text/markdown", "text/html", "image/png", "image/svg+xml"} & set(o["data"])
                    assert rich, (name, i, "".join(o["data"].get("text/plain", ""))[:200])


def test_every_figure_is_traced_to_a_library_function(built_book):
    project, out = built_book
    assert out.returncode == 0, out.stderr[-3000:]
    for name in CHAPTERS:
        res = json.loads((project / "book" / "chapters" / f"{name}.results.json").read_text())
        figures = res.get("figures", {})
        assert figures, name
        for glue, trace in figures.items():
            if trace["kind"] == "figure":
                assert any(f.startswith("shifteval.viz.") for f in trace["functions"]), (name, glue, trace)


@pytest.mark.parametrize("name", CHAPTERS)
def test_pages_show_the_science_not_the_machinery(built_book, name):
    """No stderr, warning, traceback or raw dict on a page; one parameters cell (the chapter's own, with
    the meanings); no claim bookkeeping before the provenance dropdown that ends the page."""
    import html as html_lib

    project, out = built_book
    assert out.returncode == 0, out.stderr[-3000:]
    page = (project / "_build" / "html" / "book" / "chapters" / f"{name}.html").read_text(encoding="utf-8")
    body, provenance = page.split("Provenance of this page")
    assert provenance and "Provenance of this page" not in provenance  # one dropdown, last on the page
    assert "output stderr" not in page and "tag_injected-parameters" not in page
    assert page.count("tag_parameters") == 1
    text = html_lib.unescape(re.sub(r"<[^>]+>", " ", body))
    assert not re.search(r"\b[A-Z]\w*Warning\b|Traceback \(most recent call last\)", text), name
    assert not re.search(r"\d+ claims?, \d+ holds?", text), name
    outputs = re.findall(r'<div class="output[^"]*"[^>]*>(.*?)</div>', page, re.DOTALL)
    raw = [o for o in outputs if re.search(r"\{'[^']*': ", html_lib.unescape(re.sub(r"<[^>]+>", "", o)))]
    assert not raw, (name, raw[:1])


def test_no_page_shows_a_bookkeeping_cell(built_book):
    """A cell that only records results (``R.record``) is kept off the page (tag ``remove-cell``)."""
    import ast

    project, out = built_book
    assert out.returncode == 0, out.stderr[-3000:]
    for name in CHAPTERS:
        nb = json.loads((project / "book" / "chapters" / f"{name}.ipynb").read_text())
        for i, cell in enumerate(nb["cells"]):
            tags = cell["metadata"].get("tags", [])
            if cell["cell_type"] != "code" or {"remove-cell", "remove-input"} & set(tags):
                continue
            body = ast.parse("".join(cell["source"])).body
            calls = [n.value for n in body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
            bookkeeping = [c for c in calls if ast.unparse(c.func) in ("R.record", "print")]
            assert not body or len(bookkeeping) < len(body), (name, i, "".join(cell["source"])[:200])


@pytest.mark.parametrize("name", CHAPTERS)
def test_tables_show_display_names_and_intervals_in_one_cell(built_book, name):
    """Every table of a page names rows and columns for readers (no code identifiers such as
    ``knn_5``, ``v1+fog@3`` or ``autoeval_energy_ood``), gives an interval as ``estimate [lo, hi]`` in one
    cell that does not break over lines, never as separate low and high columns."""
    from bs4 import BeautifulSoup

    from shifteval.viz.names import display_name

    project, out = built_book
    assert out.returncode == 0, out.stderr[-3000:]
    page = (project / "_build" / "html" / "book" / "chapters" / f"{name}.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(page, "html.parser")
    for opportunity in soup.select("wbr"):  # a heading's break opportunities are no text
        opportunity.decompose()
    soup.smooth()
    tables = soup.select("article table")
    assert tables, name
    for table in tables:
        labels = [th.get_text(" ", strip=True) for th in table.select("th")]
        raw = [t for t in labels if display_name(t) != t or "@" in t]
        assert not raw, (name, raw)
        ends = [t for t in labels if re.search(r"(?i)\b(low|high)$", t)]
        assert not ends, (name, ends)
        if table.find_parent(class_=["glued-table", "cell_output"]) is None:
            continue  # a table of the text (the paper's numbers as printed), not one the run computed
        cells = [td.get_text() for td in table.select("td")]
        broken = [c for c in cells if re.search(r"\S \[\S+, \S+\]|\S\xa0\[\S+, \S+\]", c)]
        assert not broken, (name, broken[:3])  # "x [lo, hi]" joined by non-breaking spaces only
