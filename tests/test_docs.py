"""The documents a reader opens first: the README stays a front door, and nothing they name is stale.

Every repository path that `README.md` and `CONTRIBUTING.md` name, in code (inline or fenced) or as a
link, must exist. A path is a token that contains a ``/`` or ends in a known file suffix. Left out:
URLs; placeholders (a path is checked up to its first ``<chapter>``, ``{name}``, ``*``, ``…`` or
upper-case component such as ``DIR``); paths outside the repository (absolute, ``../``, ``~``); what the
project generates (``_build/``, ``.venv/``, ``.cache/``, ``data/``, executed chapters); and, in command
lines, anything not under one of the repository's own top-level entries (a command's output folder).
A name without a ``/`` must be the name of some file or folder of the repository. In a layout tree (a
fenced block that is not a shell session), each entry is resolved under the folder it is indented under.
"""

import os
import re
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

DOCS = ("README.md", "CONTRIBUTING.md")
README_MAX_CHARS = 6000

SUFFIXES = {
    ".bib", ".cff", ".cfg", ".csv", ".ipynb", ".json", ".lock", ".md", ".npy", ".npz", ".png",
    ".py", ".sh", ".toml", ".txt", ".yaml", ".yml", ".zip",
}  # fmt: skip
ROOT_NAMES = {"LICENSE", "Makefile"}  # repository files named without a suffix
# Generated, git-ignored, or the user's: never required to exist in a checkout.
GENERATED = ("_build/", ".venv/", ".cache/", "data/", ".pytest_cache/", ".git/")
GENERATED_CHAPTER_FILE = re.compile(r"^book/chapters/[^/]+\.(ipynb|results\.json)$")
# Names the documents show as what a command writes, not as files of the repository. The README's taste
# of the book runs `shifteval run linear-fits --params smoke --out /tmp/taste`, which writes these two.
CREATED_BY_COMMANDS = {"linear-fits.ipynb", "linear-fits.results.json"}
COMMANDS = (
    "make ", ".venv/bin/", "shifteval ", "python", "pip ", "git ", "conda ", "xdg-open ", "open ",
    "pytest", "ruff ", "otter ", "jupyter", "bash ", "cd ",
)  # fmt: skip
SHELL_FENCES = {"bash", "sh", "shell", "console"}
SKIP_WALK = {".git", ".venv", "_build", ".cache", "__pycache__", ".pytest_cache", ".ruff_cache",
             ".mypy_cache", ".hypothesis", "node_modules"}  # fmt: skip

URL = re.compile(r"[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+|mailto:\S+", re.I)
TOKEN = re.compile(r"[\w.\-/<>{}*…~]+")
FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)")
TREE_ENTRY = re.compile(r"^( *)(\S+)(?: {2,}|$)")


def _repository_names() -> set[str]:
    """The name of every file and folder of the checkout, generated ones left out."""
    names = set()
    for folder, dirs, files in os.walk(ROOT):
        rel = Path(folder).relative_to(ROOT)
        dirs[:] = [
            d
            for d in dirs
            if d not in SKIP_WALK and not d.endswith(".egg-info") and not (rel == Path(".") and d == "data")
        ]
        names.update(dirs)
        if rel.as_posix() == "book/chapters":
            files = [f for f in files if f == "README.md"]
        names.update(files)
    return names


NAMES = _repository_names()
TOP = {p.name for p in ROOT.iterdir()} - {g.rstrip("/") for g in GENERATED}


def _placeholder(part: str) -> bool:
    return (
        any(c in part for c in "<>{}*…")
        or "..." in part
        or re.fullmatch(r"[A-Z][A-Z0-9_]+", part) is not None
    )


def _path_like(token: str) -> bool:
    return "/" in token or Path(token).suffix in SUFFIXES or token in ROOT_NAMES


def _problem(token: str, base: str = "", command: bool = False) -> str | None:
    """Why ``token`` (a path named under ``base``) is stale, or None when it exists or is not checked."""
    token = token.lstrip("('\"`").rstrip(".,;:)'\"`").split("#")[0]
    if not token or not _path_like(token) or token.startswith(("/", "../", "~", "-")):
        return None
    if "/" not in token:  # a bare name: some file or folder of the repository
        if _placeholder(token) or token in CREATED_BY_COMMANDS or token in NAMES:
            return None
        if token in ROOT_NAMES and (ROOT / token).exists():
            return None
        return f"`{token}`: no file or folder of that name"
    parts = token.split("/")
    prefix = []
    for part in parts:
        if _placeholder(part):
            break
        prefix.append(part)
    path = base + "/".join(prefix) + ("/" if len(prefix) < len(parts) and prefix else "")
    if not prefix or path.startswith(GENERATED) or GENERATED_CHAPTER_FILE.match(path):
        return None
    if command and parts[0] not in TOP:  # a command's argument outside the repository's own entries
        return None
    if path.rstrip("/").rsplit("/", 1)[-1] in CREATED_BY_COMMANDS:
        return None
    target = ROOT / path
    ok = target.is_dir() if token.endswith("/") or len(prefix) < len(parts) else target.exists()
    return None if ok else f"`{token}` ({path}): does not exist"


def _tree_problems(block: str) -> list[str]:
    """A layout tree: entries resolved under the folder they are indented under; other names anywhere."""
    problems, stack = [], []  # stack: (indent, folder path) of the entries above
    for line in block.splitlines():
        entry = TREE_ENTRY.match(line)
        rest = line
        if entry and _path_like(entry.group(2).rstrip(",")):
            indent, name = len(entry.group(1)), entry.group(2).rstrip(",")
            while stack and stack[-1][0] >= indent:
                stack.pop()
            base = stack[-1][1] if stack else ""
            problems.append(_problem(name, base))
            if name.endswith("/"):
                stack.append((indent, base + name))
            rest = line[entry.end() :]
        # the entry's description: bare names only (a path there is relative to an unknown folder)
        problems += [_problem(t) for t in TOKEN.findall(URL.sub("", rest)) if "/" not in t]
    return [p for p in problems if p]


def _command(text: str) -> bool:
    return text.lstrip().startswith(COMMANDS)


def stale_paths(text: str) -> list[str]:
    """Every path ``text`` (markdown) names in code or links that does not exist in the repository."""
    problems = []
    for match in FENCE.finditer(text):
        language, block = match.group(1).lower(), match.group(2)
        if language in SHELL_FENCES:
            for line in block.splitlines():
                code = line.split(" #", 1)[0]  # not the comment
                problems += [_problem(t, command=True) for t in TOKEN.findall(URL.sub("", code))]
        else:
            problems += _tree_problems(block)
    prose = FENCE.sub("", text)
    for match in INLINE.finditer(prose):
        span = match.group(2)
        problems += [_problem(t, command=_command(span)) for t in TOKEN.findall(URL.sub("", span))]
    for target in LINK.findall(prose):
        if not URL.match(target) and not target.startswith("#"):
            problems.append(_problem(target))
    return sorted({p for p in problems if p})


def test_readme_is_a_front_door_of_at_most_6000_characters():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text) <= README_MAX_CHARS, f"README.md has {len(text)} characters"
    for command in ("make book", "make test", "make test-all"):
        assert f"`{command}`" in text or f"\n{command} " in text, command


@pytest.mark.parametrize("name", DOCS)
def test_every_path_the_document_names_exists(name):
    assert stale_paths((ROOT / name).read_text(encoding="utf-8")) == []


def test_the_path_check_finds_what_is_stale():
    text = (
        "`src/shifteval/nope.py`, `notebooks/params/<chapter>/`, `gone.md`, `_build/html/`,\n"
        "[a page](book/missing.md), `.venv/bin/shifteval run mlm --out predictions/x`,\n"
        "```bash\n.venv/bin/python -m pytest tests/test_nothing.py  # a comment naming bad/path.py\n```\n"
        "```\nsrc/shifteval/     the library\n  viz/             figures\n  nowhere/         gone\n```\n"
    )
    assert stale_paths(text) == [
        "`book/missing.md` (book/missing.md): does not exist",
        "`gone.md`: no file or folder of that name",
        "`nowhere/` (src/shifteval/nowhere/): does not exist",
        "`src/shifteval/nope.py` (src/shifteval/nope.py): does not exist",
        "`tests/test_nothing.py` (tests/test_nothing.py): does not exist",
    ]


def test_licence_and_citation():
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "Copyright (c)" in licence
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["title"] and cff["authors"]
    assert cff["license"] == "MIT"
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'version = "{cff["version"]}"' in pyproject  # one version, stated in both
    assert len(cff["references"]) == 5  # the five papers the chapters reproduce


def test_benchmarks_readme_names_every_script():
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    scripts = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py"))
    assert scripts and [s for s in scripts if f"`{s}`" not in text] == []
