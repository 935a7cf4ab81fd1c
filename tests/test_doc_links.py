"""The documents' references resolve (issues 29, 51): every markdown link into a document of the
repository with an `#anchor` names a heading or an `<a id>` of that document; every citation by
name of docs/API.md (`docs/API.md "The fencing recipe"`, in the READMEs, the docs and the
clients' sources) names a heading or a bold paragraph title (`**Modes.**`) of it; and every
citation of any document under docs/ (`docs/ARCHITECTURE.md "Silent owners"`), in any source of
the repository — Rust, Java, Python, Go, TypeScript, the tests and scripts — names a heading or a
bold paragraph title of that document, without a bracketed remark at its end if it has one
(`"Partitions, owners, epochs"` for `Partitions, owners, epochs (cluster-wide correctness)`). The checkers are tried on hand-made
text too. No node needed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
API = ROOT / "docs" / "API.md"
# Where citations live: the documents and the clients' sources (docstrings, Javadoc).
CITING = ["*.md", "docs/*.md", "bench/*.md", "clients/**/*.md", "clients/python/src/**/*.py",
          "clients/java/src/main/**/*.java", "clients/shedlock/src/main/**/*.java", "clients/spring-integration/src/main/**/*.java",
          "java/src/main/**/*.java",
          "rust/**/*.md"]
# Every source a comment may cite a document from (issue 51 item 5).
SOURCES = ["rust/**/*.rs", "java/src/**/*.java", "clients/**/src/**/*.java", "clients/python/**/*.py",
           "clients/go/**/*.go", "clients/node/src/**/*.ts", "clients/node/contract/*.ts", "clients/node/test/*.ts",
           "tests/**/*.py", "scripts/*.py", "bench/*.py", "Makefile", ".ci/run", "*.md", "docs/*.md", "clients/**/*.md"]
LINK = re.compile(r"\]\(([^)\s#]*)#([^)\s]+)\)")
CITATION = re.compile(r'API\.md,?\s+\(?"([^"]+)"')
DOC_CITATION = re.compile(r'docs/([A-Z_]+\.md),?\s+\(?"([^"]+)"')


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors of the headings, and the explicit `<a id>`s."""
    out = set(re.findall(r'<a (?:id|name)="([^"]+)"', markdown))
    for line in markdown.splitlines():
        heading = re.match(r"#+\s+(.*)", line)
        if heading:
            text = heading.group(1).strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return out


def section_names(markdown: str) -> set[str]:
    """Headings (without their `#`s and backquotes) and bold paragraph titles (`**Modes.**`)."""
    names = {re.sub(r"^#+\s+", "", line).strip().replace("`", "")
             for line in markdown.splitlines() if line.startswith("#")}
    names |= {m.rstrip(".") for m in re.findall(r"^\*\*([^*]+?)\.?\*\*", markdown, re.M)}
    return names


def broken_links(source: Path, text: str) -> list[str]:
    out = []
    for target, anchor in LINK.findall(text):
        if target.startswith(("http:", "https:")) or (target and not target.endswith(".md")):
            continue
        doc = (source.parent / target) if target else source
        if not doc.exists():
            out.append(f"{target}#{anchor} (no such file)")
        elif anchor not in anchors(doc.read_text()):
            out.append(f"{target}#{anchor}")
    return out


def flattened(text: str) -> str:
    """One line, without the comment leaders a citation may be wrapped across (` * `, `//`, `///`,
    `//!`, `#`)."""
    return " ".join(re.sub(r"\n\s*(?:\*|//+!?|#)?", " ", text).split())


def unknown_citations(text: str, names: set[str]) -> list[str]:
    return [name for name in CITATION.findall(flattened(text)) if name.replace("`", "") not in names]


def names_a_section(name: str, names: set[str]) -> bool:
    """A section's name, or its name without a bracketed remark (`Partitions, owners, epochs` for
    `Partitions, owners, epochs (cluster-wide correctness)`)."""
    name = name.replace("`", "")
    return name in names or any(n.startswith(name + " (") for n in names)


def unknown_doc_citations(text: str, docs: dict[str, set[str]]) -> list[str]:
    return [f'docs/{doc} "{name}"' for doc, name in DOC_CITATION.findall(flattened(text))
            if doc not in docs or not names_a_section(name, docs[doc])]


def sources() -> list[Path]:
    files = {p for pattern in SOURCES for p in ROOT.glob(pattern) if p.is_file()}
    skip = {"build", "target", "node_modules", "dist"}
    this = Path(__file__).resolve()  # its hand-made citations are for the checkers' own test
    return sorted(p for p in files if not skip & set(p.relative_to(ROOT).parts) and p != this)


def citing_files() -> list[Path]:
    files = {p for pattern in CITING for p in ROOT.glob(pattern)}
    return sorted(p for p in files if not {"build", "target", "node_modules"} & set(p.relative_to(ROOT).parts))


def test_every_anchor_link_names_a_heading_of_its_document():
    problems = {str(p.relative_to(ROOT)): broken_links(p, p.read_text()) for p in citing_files() if p.suffix == ".md"}
    assert {k: v for k, v in problems.items() if v} == {}


def test_every_citation_of_api_md_names_one_of_its_sections():
    names = section_names(API.read_text())
    assert {"The fencing recipe", "Modes", "Partitions and hash tags", "GET /_locks/{key}/_watch"} <= names
    problems = {str(p.relative_to(ROOT)): unknown_citations(p.read_text(), names) for p in citing_files()}
    assert {k: v for k, v in problems.items() if v} == {}


def test_every_citation_of_a_document_names_one_of_its_sections():
    docs = {p.name: section_names(p.read_text()) for p in (ROOT / "docs").glob("*.md")}
    problems = {str(p.relative_to(ROOT)): unknown_doc_citations(p.read_text(errors="replace"), docs) for p in sources()}
    assert {k: v for k, v in problems.items() if v} == {}


def test_the_checkers_report_what_does_not_resolve(tmp_path):
    doc = tmp_path / "API.md"
    doc.write_text('# REST API\n## The fencing recipe\n<a id="watch"></a>\n**Modes.** text\n')
    readme = tmp_path / "README.md"
    readme.write_text("[a](API.md#watch) [b](API.md#the-fencing-recipe) [c](API.md#gone) [d](#rest-api)")
    assert broken_links(readme, readme.read_text()) == ["API.md#gone", "#rest-api"]
    names = section_names(doc.read_text())
    assert unknown_citations('see docs/API.md "Modes" and docs/API.md,\n "Watch a lock"', names) == ["Watch a lock"]
    docs = {"ARCHITECTURE.md": section_names("# A\n## Partitions, owners, epochs (correctness)\n## Silent owners\n")}
    rust = '//! docs/ARCHITECTURE.md "Silent\n//! owners", docs/ARCHITECTURE.md "Partitions, owners"\n' \
           '/// docs/ARCHITECTURE.md "Partitions, owners, epochs" and docs/ARCHITECTURE.md "Silent"; docs/NONE.md "X"'
    assert unknown_doc_citations(rust, docs) == ['docs/ARCHITECTURE.md "Partitions, owners"',
                                                 'docs/ARCHITECTURE.md "Silent"', 'docs/NONE.md "X"']


def test_the_readme_is_a_front_page():
    """Issue 39: README.md is the way in (at most 1,200 words, code included); what contributors
    need is in CONTRIBUTING.md, which it links, as it links every document under docs/."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.split()) <= 1200, f"README.md has {len(readme.split())} words"
    for doc in ["CONTRIBUTING.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md")))]:
        assert f"]({doc}" in readme, f"README.md does not link {doc}"
