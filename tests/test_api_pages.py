"""The library reference: one page per module, each in the table of contents, grouped science first."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "shifteval"
API = ROOT / "book" / "api"

#: Modules without a reference page, and why.
UNDOCUMENTED = {
    "shifteval.cli": "the command line: `shifteval --help` and the README document it",
    "shifteval.book.sphinxext": "the Sphinx extension that builds this book",
}
#: The groups in the order the reference shows them: the replication world, one per paper, machinery last.
GROUPS = [
    "replication", "linfit", "selection", "matching", "autoeval", "mlm", "yourrep", "labs", "foundations", "viz",
    "machinery",
]  # fmt: skip


def _modules():
    """Every module with code of its own: plain modules, and packages whose ``__init__`` defines some."""
    found = set()
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        if path.name == "__init__.py":
            if not re.search(r"^(def|class) ", path.read_text(encoding="utf-8"), re.M):
                continue  # a package's face: its docstring opens the group page
            parts = parts[:-1]
        found.add(".".join(parts))
    return found


def _documented():
    pages = {}
    for page in API.rglob("*.md"):
        for module in re.findall(r"^\.\. automodule:: (\S+)\n   :members:", page.read_text(), re.M):
            pages.setdefault(module, []).append(page)
    return pages


def _toc_files(entries):
    for entry in entries:
        yield entry["file"]
        yield from _toc_files(entry.get("sections", []))


def test_every_module_has_exactly_one_reference_page():
    pages = _documented()
    missing = _modules() - set(pages) - set(UNDOCUMENTED)
    assert not missing, f"modules without a page under book/api/: {sorted(missing)}"
    assert not {m: p for m, p in pages.items() if len(p) > 1}
    assert not set(pages) - _modules(), "a page documents a module that does not exist"


def test_every_page_is_in_the_table_of_contents_in_group_order():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    reference = next(p for p in toc["parts"] if p["caption"] == "Library reference")
    files = list(_toc_files(reference["chapters"]))
    pages = sorted(str(p.relative_to(ROOT).with_suffix("")) for p in API.rglob("*.md"))
    assert sorted(f for f in files if f != "book/api") == pages
    groups = [e["file"].split("/")[-1] for e in reference["chapters"][0]["sections"]]
    assert groups == GROUPS
