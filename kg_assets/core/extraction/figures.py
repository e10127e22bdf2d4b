"""A PDF figure is a node of the graph (seed 000, multimodal): a FIGURE entity named by its document and
number, described by its chunk's text (caption, or what the vision model saw), that `depicts` every entity
read from that text. Both extractors add it to the records of a chunk of kind 'figure'."""

from __future__ import annotations

import base64

from kg_assets.core.extraction.prompts import count_message_tokens
from kg_assets.core.extraction.rows import ChunkRecords, MentionRecord, RelationRecord

FIGURE_TYPE = "FIGURE"
DEPICTS = "depicts"


def figure_name(document_id: str, figure_number: int) -> str:
    """The figure's entity name, unique per document: "reports/helix.pdf Figure 3"."""
    return f"{document_id} Figure {figure_number}"


def add_figure_node(chunk: ChunkRecords, row: dict, description: str) -> None:
    """Append the figure's mention to `chunk` and a `depicts` relation to each entity already in it."""
    if row.get("kind") != "figure":
        return
    read = len(chunk.mentions)
    chunk.mentions.append(MentionRecord(figure_name(row["document_id"], row["figure_number"]), FIGURE_TYPE,
                                        description=description[:1000], confidence=1.0))
    chunk.relations.extend(RelationRecord(read, i, DEPICTS, description=f"{row['section_path']} shows {m.name}")
                           for i, m in enumerate(chunk.mentions[:read]))


# The request that has a vision model describe one figure; its answer (plain text) is then extracted from
# like any chunk's text, with the same prompts, response models and sanitizer.
FIGURE_PROMPT_VERSION = "figure-1"
# For `kg estimate`: prompt tokens of one image (OpenAI's low-detail price; high detail costs more) and the
# completion tokens of one description.
IMAGE_TOKENS = 85
DESCRIPTION_TOKENS = 200
_DESCRIBE = (
    "You describe one figure of a document for a knowledge graph. State what it shows: every person, "
    "organization, place, product, technology and event you can read or recognize in it, with their names "
    "exactly as written, the quantities it shows and what it says about them. Use plain sentences; do not "
    "guess names that are not in the figure or its caption."
)


def vision_prompt_tokens(figure_text: str) -> int:
    """Estimated prompt tokens of the description request of one figure (without the image bytes)."""
    return count_message_tokens([{"content": _DESCRIBE}, {"content": figure_text}]) + IMAGE_TOKENS


def figure_messages(figure_text: str, image: bytes, media_type: str) -> list[dict]:
    """The chat messages asking for a description of one figure: its label and caption as text, and the
    image as a base64 data URL `image_url` part (so the image bytes are part of the request's cache key)."""
    url = f"data:{media_type};base64,{base64.b64encode(image).decode('ascii')}"
    return [
        {"role": "system", "content": _DESCRIBE},
        {"role": "user", "content": [{"type": "text", "text": figure_text},
                                     {"type": "image_url", "image_url": {"url": url}}]},
    ]
