"""Every fact about Kafka is cited to something a reader can open: a KIP, a Kafka ticket, a Kafka class or
method, or a page under docs/. The reference notes the project was first built from live outside the
repository, so a citation of one of their sections, or of a file beside the checkout, sends a newcomer
nowhere. This test finds such citations in the sources, tests, docs, benchmarks, examples and the README.

The patterns below are written so that they do not match their own text (character classes and escapes
stand where the forbidden words would be), so this file is scanned like every other.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
SCANNED = ("src", "tests", "docs", "benchmarks", "examples")
SUFFIXES = {".py", ".md", ".java", ".txt", ".json", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".sh", ".html"}

#: (what is wrong, words one of which a file must hold to be searched, pattern). A Kafka distribution beside
#: the checkout (``KAFKA_HOME``'s default) is a place to run Kafka from, not a document: it is allowed.
FORBIDDEN: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    ("a file beside the checkout", ("share" "d/",), re.compile(r"(\.\.|/work)/share[d]/(?!kafka\b)")),
    ("a reference folder outside the repository", ("share" "d/",),
     re.compile(r"\bshare[d]/(spec|goldens|recordings|live-cases|seeds|hooks)\b")),
    ("a reference folder outside the repository", ("golden" "s/", "recording" "s/"),
     re.compile(r"(?<![\w/.-])(golden[s]|recording[s])/")),
    ("a reference document outside the repository", (".m" "d",), re.compile(r"\b(DESIG[N]|STYL[E]|FORMAT[S])\.md\b")),
    ("a section of the reference spec", ("sp" "ec",), re.compile(r"\b[Ss]pe[c](ification)?,? (section |§ ?)?\d")),
    ("an appendix of the reference spec", ("appendi" "x",),
     re.compile(r"\b[Ss]pe[c](ification)?,? [Aa]ppendix\b|\bAppendi[x] [A-D]\b")),
    ("one of the reference spec files", ("sp" "ec", "-and-" "wire"),
     re.compile(r"\b(assignor|host-and-wir[e]) spe[c](ification)?\b|\bhost-and-wir[e]\b")),
    ("a section sign", ("§",), re.compile(r"§ ?\d")),
    ("the reference spec", ("sp" "ec",), re.compile(r"\b(per |see |in )?the spe[c](ification)?\b|\s\(spe[c]\)")),
)


def _files() -> list[Path]:
    found = [ROOT / "README.md"]
    for top in SCANNED:
        found.extend(p for p in sorted((ROOT / top).rglob("*"))
                     if p.is_file() and p.suffix in SUFFIXES and ".venv" not in p.parts)
    return found


def citation_problems(path: Path) -> list[str]:
    """``file:line: what`` for each forbidden citation in ``path``."""
    text = path.read_text(encoding="utf-8", errors="replace")
    found = set()
    lowered = text.lower()
    for what, needles, pattern in FORBIDDEN:
        if not any(needle in lowered for needle in needles):
            continue  # a cheap test first: most files (the golden cases) have none of the words
        for match in pattern.finditer(text):
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            line = text[start:end if end >= 0 else len(text)]
            found.add((text.count("\n", 0, start) + 1, what, line.strip()[:120]))
    return [f"{path.relative_to(ROOT)}:{number}: {what}: {line}" for number, what, line in sorted(found)]


def test_patterns_find_what_they_are_for() -> None:
    bad = ["see the spe" + "c", "(host-and-wir" + "e sp" + "ec 5.7)", "Spe" + "c 11.6:", "assignor spe" + "c section 3",
           "(Appendi" + "x A)", "DESIG" + "N.md", "../share" + "d/spec/assignors.md", "§" + "0", "as in (spe" + "c)",
           "in `golden" + "s/`"]
    good = ["KAFKA_HOME defaults to ../share" + "d/kafka", "docs/formats.md", "resolve(spec)", "the assignor specs",
            "TableSpec", "KIP-924", "tests/golden/", "benchmarks/results/"]
    for text in bad:
        assert any(p.search(text) for _, _, p in FORBIDDEN), text
    for text in good:
        assert not any(p.search(text) for _, _, p in FORBIDDEN), text


def test_no_citation_points_outside_the_repository() -> None:
    problems = [problem for path in _files() for problem in citation_problems(path)]
    assert not problems, "cite a KIP, a Kafka ticket, class or method, or a docs/ page instead:\n" + "\n".join(problems)


def _design_floors() -> list[tuple[str, ...]]:
    """The units of each row of docs/design.md's floor table, in the table's order."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = text.split("## The floors", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    return [tuple(re.findall(r"`([a-z_]+)`", row.split("|")[2])) for row in rows]


def test_design_page_mirrors_the_layout_test() -> None:
    from tests.test_layout import FLOORS, SRC

    assert _design_floors() == [tuple(floor) for floor in FLOORS], "docs/design.md's floor table and FLOORS differ"
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    packages = sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").exists())
    missing = [name for name in packages if f"- `{name}/`" not in text]
    assert not missing, f"docs/design.md describes no package {missing}"
