"""A PDF figure is a node of the graph (seed 000, multimodal): a FIGURE entity named by its document and
number, described by its chunk's text (caption, or what the vision model saw), that `depicts` every entity
read from that text. Both extractors add it to the records of a chunk of kind 'figure'."""

from __future__ import annotations

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
