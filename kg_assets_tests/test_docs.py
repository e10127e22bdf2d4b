"""The docs stay true to the repository: links and anchors resolve, named paths exist, and every `kg`
subcommand and `scripts/dev.sh` case the docs name is real. Pure file reading, no subprocess."""

import argparse
import fnmatch
import re
from pathlib import Path

import pytest

from kg_assets.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), ROOT / "benchmarks" / "README.md",
               ROOT / "deploy" / "README.md"])
# A path that starts with one of these is a repository path (kg_assets' subpackages are resolved in kg_assets/).
TOP_LEVEL = ("kg_assets", "kg_assets_tests", "scripts", "benchmarks", "dbt", "deploy", "docs", "data", ".ci")
SUBPACKAGES = ("core", "defs", "storage", "extractors", "query", "commands", "evaluation", "testing")

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
KG_COMMAND = re.compile(r"(?<![\w/.-])(?:\.venv/bin/)?kg\s+([a-z][\w-]*)(?:\s+([a-z][\w-]*))?")
DEV_SH = re.compile(r"scripts/dev\.sh\s+([^\s`|;&)]+)")


def split_markdown(text: str) -> tuple[list[str], list[str]]:
    """(prose lines, code block lines): fenced blocks apart from the rest."""
    prose, code, fenced = [], [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        (code if fenced else prose).append(line)
    return prose, code


def code_texts(path: Path) -> list[str]:
    """Every inline code span of a page and every line of its fenced blocks."""
    prose, code = split_markdown(path.read_text())
    return [span for line in prose for _, span in CODE_SPAN.findall(line)] + code


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: markup dropped, lower case, punctuation removed, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for line in split_markdown(path.read_text())[0]:
        match = HEADING.match(line)
        if not match:
            continue
        slug = github_slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def links(path: Path) -> list[str]:
    prose, _ = split_markdown(path.read_text())
    text = "\n".join(CODE_SPAN.sub("", line) for line in prose)
    return LINK.findall(text)


def gitignored(relative: str) -> bool:
    """Generated files the docs name (the warehouse, benchmark output, dbt's target) are git-ignored."""
    for pattern in (ROOT / ".gitignore").read_text().splitlines():
        pattern = pattern.strip()
        if not pattern or pattern.startswith("#"):
            continue
        pattern = pattern.lstrip("/")
        candidate = relative
        while candidate:
            if fnmatch.fnmatch(candidate, pattern.rstrip("/")) or fnmatch.fnmatch(candidate + "/", pattern):
                return True
            candidate = candidate.rpartition("/")[0]
    return False


def named_paths(path: Path) -> list[str]:
    """Words of the page's code that are repository paths: they start with a top-level folder or a
    kg_assets subpackage and are no glob, URL, absolute path or placeholder."""
    found = []
    for code in code_texts(path):
        for word in re.split(r"[\s,;()\"'=<>]+", code):
            word = word.rstrip(".:")
            first = word.split("/")[0]
            if "/" not in word or first not in TOP_LEVEL + SUBPACKAGES:
                continue
            if any(c in word for c in "*?[]{}…$~") or "://" in word:
                continue
            found.append(word)
    return found


def resolves(word: str) -> bool:
    bases = [ROOT] + ([ROOT / "kg_assets"] if word.split("/")[0] in SUBPACKAGES else [])
    for base in bases:
        if gitignored(str((base / word).relative_to(ROOT))):
            return True
        candidate = base / word
        if candidate.exists():
            return True
        # `core/extraction/rows.build_rows`: an attribute the module defines
        module, dot, name = word.rpartition(".")
        if dot and "/" in module and (base / f"{module}.py").exists():
            return defines((base / f"{module}.py").read_text(), name)
    return False


def defines(source: str, name: str) -> bool:
    """The module source defines `name` at its top level: a def, a class or an assignment."""
    return re.search(rf"^(?:(?:async\s+)?def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*[:=]", source,
                     re.MULTILINE) is not None


def cli_commands() -> dict[str, set[str] | None]:
    """Each `kg` subcommand -> its own subcommands or positional choices (None when it takes any word)."""
    def children(parser: argparse.ArgumentParser) -> set[str] | None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                return set(action.choices)
            if not action.option_strings and action.choices and action.dest != "help":
                return set(action.choices)
        return None

    root = build_parser()
    sub = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    return {name: children(parser) for name, parser in sub.choices.items()}


def dev_sh_cases() -> set[str]:
    text = (ROOT / "scripts" / "dev.sh").read_text()
    body = text[text.index("case "):text.index("esac")]
    labels = [m.group(1) for line in body.splitlines() if (m := re.match(r"^\s*([\w|-]+)\)", line))]
    return {case for label in labels for case in label.split("|")}


def page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("page", DOCS, ids=page_id)
def test_relative_links_and_anchors_resolve(page):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (page.parent / file_part).resolve() if file_part else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with anchor #{anchor} in {resolved.relative_to(ROOT)}")
    assert not broken, f"{page_id(page)}: " + "; ".join(broken)


@pytest.mark.parametrize("page", DOCS, ids=page_id)
def test_named_repository_paths_exist(page):
    missing = sorted({word for word in named_paths(page) if not resolves(word)})
    assert not missing, f"{page_id(page)} names paths that do not exist: {missing}"


@pytest.mark.parametrize("page", DOCS, ids=page_id)
def test_named_kg_commands_exist(page):
    commands = cli_commands()
    wrong = []
    for code in code_texts(page):
        for name, second in KG_COMMAND.findall(code):
            if name not in commands:
                wrong.append(f"kg {name}")
            elif second and commands[name] is not None and second not in commands[name]:
                wrong.append(f"kg {name} {second}")
    assert not wrong, f"{page_id(page)} names kg commands the CLI does not have: {sorted(set(wrong))}"


@pytest.mark.parametrize("page", DOCS, ids=page_id)
def test_named_dev_sh_cases_exist(page):
    cases = dev_sh_cases()
    wrong = {case for code in code_texts(page) for case in DEV_SH.findall(code)
             if not case.startswith("#") and case not in cases}
    assert not wrong, f"{page_id(page)} names scripts/dev.sh cases that do not exist: {sorted(wrong)}"


def test_the_checks_read_what_they_should():
    """The helpers themselves: GitHub's slugs, the CLI tree, dev.sh's cases."""
    assert github_slug("What `scripts/dev.sh demo` prints") == "what-scriptsdevsh-demo-prints"
    assert github_slug("Growing beyond one machine: DuckLake") == "growing-beyond-one-machine-ducklake"
    assert github_slug("`kg sql` and credentials") == "kg-sql-and-credentials"
    commands = cli_commands()
    assert {"run", "sql", "eval", "facts", "link", "search"} <= set(commands)
    assert {"linking", "extraction", "facts"} <= commands["eval"] and "forget" in commands["facts"]
    assert dev_sh_cases() == {"demo", "test", "coverage", "ui", "lock"}
    assert resolves("core/extraction/rows.build_rows") and resolves("core/extraction/rows.ExtractionResult")
    assert resolves("core/extraction/rows.MENTION_ROWS") is False  # the module exists, the name does not
