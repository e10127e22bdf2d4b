"""Offline pictures of the graph: an entity's neighbourhood, or the most connected core.

networkx lays the nodes out (Fruchterman-Reingold force layout with a fixed seed, so the same graph
gives the same picture) and matplotlib draws them with its Agg/SVG backends: both are pure wheels from PyPI, need no system
package (no Graphviz, no browser) and write SVG or PNG by the file's suffix. Nodes are coloured by
entity type (legend in the corner) and sized by degree; edges are drawn thicker the more mentions
support them, and each is labelled by its relation type
(several types between two nodes share one label). Sizes and widths come in a few steps, so a picture is
drawn again only when it would look different.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from kg_assets.query.models import Subgraph
from kg_assets.storage.warehouse import Warehouse

PICTURE_SUFFIXES = (".svg", ".png")
MAX_LABEL_CHARS = 24
LAYOUT_SEED = 7
STEPS = 8  # node sizes and edge widths are drawn in this many steps (`drawing`)


def _short(text: str) -> str:
    return text if len(text) <= MAX_LABEL_CHARS else text[: MAX_LABEL_CHARS - 1] + "…"


def drawing(subgraph: Subgraph, title: str = "") -> dict:
    """What a picture of `subgraph` shows, and no more: each node's label, type, whether it is the centre, and its
    size; each pair's relation types and its edge's width. Sizes and widths come in STEPS steps (a node's of the
    square root of its share of the highest degree, an edge's of its share of the strongest weight), so one more
    supporting mention in a graph of thousands draws the same picture and `render_subgraph` keeps it."""
    top = max((n.degree for n in subgraph.nodes), default=0) or 1
    weights: dict[tuple[str, str], int] = {}
    labels: dict[tuple[str, str], list[str]] = {}
    for edge in subgraph.edges:
        pair = (edge.source_id, edge.target_id)
        pair = pair if pair in weights or pair[::-1] not in weights else pair[::-1]  # the picture is undirected
        weights[pair] = weights.get(pair, 0) + edge.weight
        names = labels.setdefault(tuple(sorted(pair)), [])
        if edge.relation_type not in names:
            names.append(edge.relation_type)
    strongest = max(weights.values(), default=1) or 1
    return {
        "title": title,
        "nodes": [[n.node_id, _short(n.label), n.entity_type, n.hop == 0, round(STEPS * (max(n.degree, 0) / top) ** 0.5)]
                  for n in subgraph.nodes],
        "edges": [[a, b, max(1, round(STEPS * w / strongest)), ", ".join(labels[tuple(sorted((a, b)))])]
                  for (a, b), w in weights.items()],
    }


def render_subgraph(subgraph: Subgraph, out: str | os.PathLike[str], title: str = "") -> Path:
    """Draw the subgraph to `out` (.svg or .png). An SVG already drawn of the same `drawing` (its digest is in the
    file's description) is kept as it is: drawing takes seconds (matplotlib), checking does not."""
    out = Path(out)
    shown = drawing(subgraph, title)
    digest = hashlib.sha256(json.dumps(shown).encode()).hexdigest()
    if out.suffix.lower() == ".svg" and out.is_file() and f"kg-subgraph-sha256:{digest}" in out.read_text(errors="ignore"):
        return out
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import networkx as nx

    if out.suffix.lower() not in PICTURE_SUFFIXES:
        raise ValueError(f"picture file must end in {' or '.join(PICTURE_SUFFIXES)}: {out}")
    graph = nx.Graph()
    for node_id, label, entity_type, centre, size in shown["nodes"]:
        graph.add_node(node_id, label=label, entity_type=entity_type, size=size, centre=centre)
    for source_id, target_id, width, names in shown["edges"]:
        graph.add_edge(source_id, target_id, weight=width, names=names)
    types = sorted({data["entity_type"] for _, data in graph.nodes(data=True)})
    palette = plt.get_cmap("tab10" if len(types) <= 10 else "tab20")
    colour = {t: palette(i % palette.N) for i, t in enumerate(types)}

    # SVG text stays text (searchable, smaller) instead of glyph outlines.
    plt.rcParams["svg.fonttype"] = "none"
    figure, axes = plt.subplots(figsize=(14, 10))
    axes.set_axis_off()
    if title:
        axes.set_title(title)
    if graph.number_of_nodes():
        layout = nx.spring_layout(graph, seed=LAYOUT_SEED, k=3 / graph.number_of_nodes() ** 0.5, iterations=300)
        nx.draw_networkx_edges(graph, layout, ax=axes, edge_color="#9a9a9a", alpha=0.7,
                               width=[0.6 + 2.4 * w / STEPS for _, _, w in graph.edges(data="weight")])
        nx.draw_networkx_nodes(graph, layout, ax=axes, node_color=[colour[graph.nodes[n]["entity_type"]] for n in graph],
                               node_size=[120 + 900 * graph.nodes[n]["size"] / STEPS for n in graph],
                               edgecolors=["black" if graph.nodes[n]["centre"] else "white" for n in graph],
                               linewidths=[2.5 if graph.nodes[n]["centre"] else 0.8 for n in graph])
        nx.draw_networkx_labels(graph, layout, ax=axes, labels={n: graph.nodes[n]["label"] for n in graph}, font_size=8)
        nx.draw_networkx_edge_labels(graph, layout, ax=axes, font_size=6, font_color="#444444",
                                     edge_labels={(a, b): names for a, b, names in graph.edges(data="names")},
                                     bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})
        handles = [plt.Line2D([], [], marker="o", linestyle="", markersize=8, color=colour[t], label=t) for t in types]
        axes.legend(handles=handles, loc="lower left", fontsize=8, frameon=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    # A fixed date keeps the SVG the same from run to run (it would otherwise embed the rendering time).
    figure.savefig(out, format=out.suffix.lower()[1:], bbox_inches="tight", dpi=120,
                   metadata={"Date": None, "Description": f"kg-subgraph-sha256:{digest}"}
                   if out.suffix.lower() == ".svg" else None)
    plt.close(figure)
    return out


def render_core(db_path: str | os.PathLike[str] | Warehouse | None, out: str | os.PathLike[str], top: int = 25) -> Path:
    """The picture of the graph's most connected core (the `top` nodes of highest degree), e.g. for the
    knowledge_graph materialization's metadata."""
    from kg_assets.query.graph import KnowledgeGraph

    core = KnowledgeGraph(db_path).core(top=top)
    return render_subgraph(core, out, title=f"Most connected {len(core.nodes)} entities")
