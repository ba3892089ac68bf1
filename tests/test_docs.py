"""The documentation a reader of this repository has: docstrings and comments cite sections of
docs/*.md (never files outside the repository), every cited section exists, the links between the
docs resolve, and every path the README's Architecture section names exists."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

# citations of the behaviour specification and theory notes the project was built from, which live
# outside the repository: the in-repo docs (docs/original.md, methods.md, engines.md, optimisers.md)
# hold that behaviour now
OUTSIDE = re.compile(
    r"smallvis-R\.md|mize-optimisers\.md|ncvis\.md|DESIGN\.md|spec §|§|seeds? 00\d|/work/shared"
)
# a page of docs, or a section of one (page.md#anchor), as docstrings and comments cite them
DOC_CITATION = re.compile(r"docs/([\w.-]+\.md)(?:#([\w-]+))?")
# [text](target) links in markdown
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set:
    """The anchors of a markdown file's headings (not those inside fenced code blocks)."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    seen: dict = {}
    anchors = set()
    for match in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, flags=re.M):
        slug = _slug(match.group(1))
        count = seen.get(slug, 0)
        anchors.add(slug if count == 0 else f"{slug}-{count}")
        seen[slug] = count + 1
    return anchors


def _files(folder: str, suffixes=(".py",)) -> list:
    return sorted(p for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix in suffixes)


def _citations(paths) -> list:
    """(where, doc file name, anchor or None) for every docs/*.md citation in ``paths``."""
    found = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in DOC_CITATION.finditer(line):
                found.append((f"{path.relative_to(ROOT)}:{number}", match.group(1), match.group(2)))
    return found


def test_anchor_rule():
    assert _slug("Independent calibration (use_cpp)") == "independent-calibration-use_cpp"
    assert _slug("More-Thuente line search") == "more-thuente-line-search"
    assert _slug("Barnes–Hut") == "barneshut"  # an en dash is punctuation: use "-" in headings
    assert _slug("`eps` and the *eps rule*") == "eps-and-the-eps-rule"


def test_the_docs_exist():
    for name in ("original.md", "methods.md", "engines.md", "optimisers.md", "deviations.md"):
        assert (DOCS / name).is_file(), name


@pytest.mark.parametrize("folder", ["src", "tests", "benchmarks", "docs", "README.md"])
def test_no_citation_of_files_outside_the_repository(folder):
    here = Path(__file__).resolve()
    bad = []
    paths = [README] if folder == "README.md" else _files(folder, (".py", ".md"))
    for path in paths:
        if path.resolve() == here:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OUTSIDE.search(line):
                bad.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not bad, ("cite docs/*.md sections instead of files outside the repository:\n"
                     + "\n".join(bad))


@pytest.mark.parametrize("folder", ["src", "tests", "benchmarks"])
def test_cited_doc_sections_exist(folder):
    citations = _citations(_files(folder))
    if folder == "src":
        assert len(citations) > 40  # the docstrings do cite the docs
    anchors = {}
    bad = []
    for where, name, anchor in citations:
        path = DOCS / name
        if not path.is_file():
            bad.append(f"{where}: docs/{name} does not exist")
            continue
        if anchor is not None:
            if name not in anchors:
                anchors[name] = _anchors(path)
            if anchor not in anchors[name]:
                bad.append(f"{where}: docs/{name} has no heading with anchor #{anchor}")
    assert not bad, "\n".join(bad)


def test_links_between_the_docs_resolve():
    bad = []
    for page in sorted(DOCS.glob("*.md")) + [README]:
        for target in MD_LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            path = (page.parent / file_part).resolve() if file_part else page
            if not path.exists():
                bad.append(f"{page.name}: {target}: no such file")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                bad.append(f"{page.name}: {target}: no such heading")
    assert not bad, "\n".join(bad)


def _architecture_section() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## Architecture\n(.*?)(?=^## )", text, flags=re.S | re.M)
    assert match, "README.md has no '## Architecture' section followed by another section"
    return match.group(1)


def test_readme_architecture_paths_exist():
    section = _architecture_section()
    paths = re.findall(r"(?<![\w/.])((?:src/)?smallvis/[\w./-]*|tests/[\w./-]+|docs/[\w./-]+"
                       r"|pyproject\.toml)", section)
    assert len(paths) > 20
    missing = []
    for written in paths:
        written = written.rstrip(".,;:")
        path = ROOT / ("src/" + written if written.startswith("smallvis/") else written)
        if not path.exists():
            missing.append(written)
    assert not missing, f"README's Architecture section names paths that do not exist: {missing}"
