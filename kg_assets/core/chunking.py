"""Token-aware chunking with an offline tokenizer (bpe-openai ships its vocabularies).

Text is cut into segments (headings, paragraphs, sentences); segments are packed greedily into chunks
of at most `max_tokens`, a new section starts a new chunk, and the last `overlap_tokens` worth of
segments are repeated at the start of the next chunk. Offsets index the document text exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.normalize import stable_hash
from kg_assets.core.tokens import DEFAULT_ENCODING, count_tokens

# 2: plain-text and PDF headings (the reader marks them as "#" lines) give section paths
# 3: a PDF figure is a chunk of its own (kind 'figure'), after the document's text chunks
# 4: tokens counted in bounded windows (any length), over-long segments cut until every piece fits, and the
#    overlap never makes a chunk bigger than max_tokens
CHUNKER_VERSION = "chunker-4"
# A sentence ends at . ! ? before whitespace, unless it closes an abbreviation ("Dr.", "Inc.", "U.S."). The mark
# comes first and the abbreviations are looked behind it, so they are tried at marks only, not at every character
# (ten times faster, the same matches).
_SENTENCE_END = re.compile(
    r"[.!?](?<!\bDr.)(?<!\bMr.)(?<!\bMs.)(?<!\bMrs.)(?<!\bProf.)(?<!\bInc.)(?<!\bSt.)(?<!\bvs.)(?<![A-Z].)(?=\s)"
)
_HEADING = re.compile(r"^(#{1,6}) (.*)$")


@dataclass(frozen=True)
class ChunkingConfig:
    max_tokens: int = 600
    overlap_tokens: int = 80
    encoding: str = DEFAULT_ENCODING

    def __post_init__(self):
        if self.max_tokens < 16 or not 0 <= self.overlap_tokens < self.max_tokens // 2:
            raise ValueError("need max_tokens >= 16 and 0 <= overlap_tokens < max_tokens / 2")


def _segments(text: str) -> list[tuple[int, int, int | None, str | None]]:
    """(start, end, heading level or None, heading title) for each heading line or sentence."""
    out = []
    line_start = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped:
            offset = line_start + len(line) - len(line.lstrip())
            heading = _HEADING.match(stripped) if stripped[0] == "#" else None
            if heading:
                out.append((offset, offset + len(stripped), len(heading.group(1)), heading.group(2).strip()))
            else:
                start = 0
                body = stripped
                for match in _SENTENCE_END.finditer(body):
                    end = match.end()
                    if body[start:end].strip():
                        lead = len(body[start:end]) - len(body[start:end].lstrip())
                        out.append((offset + start + lead, offset + end, None, None))
                    start = end
                if body[start:].strip():
                    lead = len(body[start:]) - len(body[start:].lstrip())
                    out.append((offset + start + lead, offset + len(body), None, None))
        line_start += len(line) + 1
    return out


def _split_long(text: str, start: int, end: int, tokens: int, max_tokens: int,
                count) -> list[tuple[int, int, int]]:
    """Cut an over-long segment into word-boundary pieces of at most max_tokens (rare: tables, dumps, a line
    without a sentence end), each counted; a piece still too long (dense script, one endless token) is cut
    again. Each level reads the segment once and pieces shrink geometrically, so this stays O(n log n)."""
    pieces = max(2, -(-tokens // max_tokens) + 1)
    step = (end - start) / pieces
    out, piece_start = [], start
    for i in range(1, pieces + 1):
        target = end if i == pieces else int(start + i * step)
        space = text.rfind(" ", piece_start + 1, target + 1) if i < pieces else -1
        piece_end = space if space > piece_start else target
        if piece_end > piece_start:
            piece_tokens = count(text[piece_start:piece_end])
            if piece_tokens > max_tokens and piece_end - piece_start > 1:
                out.extend(_split_long(text, piece_start, piece_end, piece_tokens, max_tokens, count))
            elif piece_tokens:
                out.append((piece_start, piece_end, piece_tokens))
        piece_start = piece_end + 1 if space > piece_start else piece_end
    return out


def chunk_text(text: str, config: ChunkingConfig) -> list[dict]:
    """Chunks of one document as dicts: chunk_index, char_start, char_end, token_count, section_path."""
    segments = _segments(text)
    if not segments:
        return []
    # A plain loop: the batch API starts a thread pool per call, ten times slower for short segments.
    def count(piece: str) -> int:
        return count_tokens(piece, config.encoding)

    counts = [count(text[s:e]) for s, e, _, _ in segments]
    units: list[tuple[int, int, int, tuple[str, ...]]] = []  # start, end, tokens, section path
    path: list[tuple[int, str]] = []
    for (start, end, level, title), tokens in zip(segments, counts):
        if level is not None:
            path = [p for p in path if p[0] < level] + [(level, title)]
        section = tuple(t for _, t in path)
        if tokens > config.max_tokens:
            units.extend((a, b, t, section) for a, b, t in _split_long(text, start, end, tokens, config.max_tokens, count))
        else:
            units.append((start, end, tokens, section))

    chunks: list[dict] = []
    current: list[tuple[int, int, int, tuple[str, ...]]] = []

    def flush() -> None:
        chunks.append({
            "chunk_index": len(chunks),
            "char_start": current[0][0],
            "char_end": current[-1][1],
            "token_count": sum(u[2] for u in current),
            "section_path": " > ".join(current[0][3]) or None,
        })

    fresh = 0  # units in `current` not carried over as overlap
    total = 0  # tokens in `current` (a running sum: a chunk may hold hundreds of one-token lines)
    for unit in units:
        starts_section = bool(current) and unit[3] != current[-1][3]
        too_big = total + unit[2] > config.max_tokens
        if fresh and (too_big or starts_section):
            flush()
            carry: list = []
            if not starts_section:
                budget = config.overlap_tokens
                for prev in reversed(current):
                    if prev[2] > budget:
                        break
                    carry.append(prev)
                    budget -= prev[2]
                carry.reverse()
            total = sum(u[2] for u in carry)
            while carry and total + unit[2] > config.max_tokens:  # the overlap never makes a chunk too big
                total -= carry.pop(0)[2]
            current, fresh = carry, 0
        current.append(unit)
        total += unit[2]
        fresh += 1
    if current and fresh:
        flush()
    return chunks


def figure_chunks(document_id: str, figures: list[dict] | None, first_index: int, config: ChunkingConfig) -> list[dict]:
    """One chunk per readable figure of a PDF: kind 'figure', its page and number, and its label and caption
    as text ("Figure 3 (page 2): Sensor array of Helix"), which the vision model's description replaces when
    one is configured. It has no offsets: a figure is not a span of the document text."""
    rows = []
    for figure in figures or []:
        if figure["error"] is not None:
            continue
        label = f"Figure {figure['figure_number']} (page {figure['page']})"
        body = f"{label}: {figure['caption']}" if figure["caption"] else label
        rows.append({
            "chunk_index": first_index + len(rows), "char_start": None, "char_end": None,
            "token_count": count_tokens(body, config.encoding), "section_path": label, "document_id": document_id, "text": body,
            "content_hash": stable_hash(body, figure["image_sha256"]),
            "chunk_id": "chunk_" + stable_hash(document_id, "figure", str(figure["page"]), str(figure["figure_number"]),
                                               figure["image_sha256"]),
            "chunker_version": CHUNKER_VERSION, "kind": "figure", "page": figure["page"],
            "figure_number": figure["figure_number"],
        })
    return rows


def chunk_document(document_id: str, text: str, figures: list[dict] | None, config: ChunkingConfig) -> list[dict]:
    """The chunk rows of one document: its text chunks, then one chunk per figure of a PDF."""
    rows = []
    text_chunks = chunk_text(text, config)
    for chunk in text_chunks:
        body = text[chunk["char_start"] : chunk["char_end"]]
        content_hash = stable_hash(body)
        chunk.update(
            document_id=document_id,
            text=body,
            content_hash=content_hash,
            chunk_id="chunk_" + stable_hash(document_id, str(chunk["char_start"]), content_hash),
            chunker_version=CHUNKER_VERSION,
            kind="text",
        )
        rows.append(chunk)
    rows.extend(figure_chunks(document_id, figures, len(text_chunks), config))
    return rows


def documents_to_chunk(documents: pl.DataFrame) -> list[tuple[str, tuple[str, str, list[dict] | None]]]:
    """(document_id, (document_id, text, figures)) of every document with status 'ok'."""
    ok = documents.filter(pl.col("status") == "ok")
    figures = ok["figures"].to_list() if "figures" in ok.columns else [None] * ok.height
    return [(document_id, (document_id, text, document_figures))
            for (document_id, text), document_figures in zip(ok.select("document_id", "text").iter_rows(), figures)]


def chunks_frame(rows: list[dict]) -> pl.DataFrame:
    """Chunk rows as a frame of the CHUNKS contract."""
    return schemas.conform(pl.DataFrame(rows, infer_schema_length=None) if rows else schemas.empty(schemas.CHUNKS), schemas.CHUNKS)


def chunk_documents(documents: pl.DataFrame, config: ChunkingConfig) -> pl.DataFrame:
    """Chunks of every document with status 'ok' (columns of the CHUNKS contract): its text chunks, then
    one chunk per figure of a PDF. Raises on the first document that raises; the chunks step isolates each
    document instead (`core.isolation`)."""
    return chunks_frame([row for _, (d, t, f) in documents_to_chunk(documents) for row in chunk_document(d, t, f, config)])
