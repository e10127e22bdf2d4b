"""HTML to plain text with headings kept as Markdown heading lines, in work bounded by the input's size.

Building an HTML tree costs time proportional to the nesting depth for some tags in every parser (scope
checks walk the stack of open elements), so deep nesting is quadratic: lexbor took 11 s for 100,000
nested divs. libxml2 (lxml) stops at a depth of MAX_DEPTH, which bounds that work; the text before
that point is kept and the row's warning says where parsing stopped and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

# libxml2's own limit (without XML_PARSE_HUGE); browsers cap the tree at a few hundred too (Blink: 512),
# and real pages stay far below. The worst case for a 20 MB file is seconds (benchmarks/hostile_inputs.py).
MAX_DEPTH = 256
_DROPPED = ("script", "style", "nav", "noscript", "template", "head", "footer", "svg", "iframe")
_BLOCKS = ("p", "li", "div", "br", "tr", "section", "article", "blockquote", "pre")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_DATE_META = {"date", "article:published_time", "dc.date"}


@dataclass(frozen=True)
class HtmlText:
    body: str
    title: str | None
    headings: list[str]
    date: str | None
    warning: str | None


def html_to_text(markup: str) -> HtmlText:
    root, warning = _parse(markup)
    if root is None:
        return HtmlText("", None, [], None, warning)
    date = next((m.get("content") for m in root.iter("meta")
                 if (m.get("name") or m.get("property") or "").lower() in _DATE_META), None)
    title_node = root.find(".//title")
    title = " ".join("".join(title_node.itertext()).split()) if title_node is not None else None
    etree.strip_elements(root, *_DROPPED, with_tail=False)
    headings = []
    for node in root.iter(*_HEADINGS):
        heading = " ".join(" ".join(node.itertext()).split())
        headings.append(heading)
        for child in list(node):
            node.remove(child)
        node.text = f"\n\n{'#' * int(node.tag[1])} {heading}\n\n"
    for node in root.iter(*_BLOCKS):
        node.tail = "\n" + (node.tail or "")
    container = root.find("body")
    text = "".join((container if container is not None else root).itertext())
    lines = [" ".join(line.split()) for line in text.splitlines()]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return HtmlText(body, title or (headings[0] if headings else None), headings, date, warning)


def _parse(markup: str) -> tuple[etree._Element | None, str | None]:
    parser = etree.HTMLParser(remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(markup, parser)
    except etree.XMLSyntaxError:  # no element at all
        return None, None
    # libxml2 halts at its limits (nesting deeper than MAX_DEPTH, 10 MB in one text node) with a fatal
    # error, and keeps the tree it built up to there.
    halt = next((e for e in parser.error_log if e.level == etree.ErrorLevels.FATAL), None)
    if halt is None:
        return root, None
    return root, f"HTML parsing stopped at line {halt.line} (libxml2: {halt.message.strip()}); the text from there on was dropped"
