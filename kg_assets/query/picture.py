"""Offline pictures of the graph: an entity's neighbourhood, or the most connected core.

networkx lays the nodes out (Fruchterman-Reingold force layout with a fixed seed, so the same graph gives the same
picture). An SVG is written here, as plain elements (a line per edge, a circle and a text per node, a legend and a
title): it is what the core picture of every consolidation needs, and matplotlib took about 1.5 s of a small run for it
(0.8 s to import, 0.7 s to draw 25 circles). A PNG is drawn by matplotlib from the same layout. Both are pure wheels
from PyPI and need no system package (no Graphviz, no browser). Nodes are coloured by entity type (legend in the
corner) and sized by degree; edges are drawn thicker the more mentions support them, and each is labelled by its
relation type (several types between two nodes share one label). Sizes and widths come in a few steps, so a picture
is drawn again only when it would look different.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from kg_assets.query.models import Subgraph
from kg_assets.storage.warehouse import Warehouse

PICTURE_SUFFIXES = (".svg", ".png")
MAX_LABEL_CHARS = 24
LAYOUT_SEED = 7
STEPS = 8  # node sizes and edge widths are drawn in this many steps (`drawing`)
WIDTH, HEIGHT, MARGIN = 1400, 1000, 90  # SVG user units (pixels)
# matplotlib's tab10, then tab20's lighter shades: one colour per entity type
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
           "#dbdb8d", "#9edae5")


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
    file's description) is kept as it is."""
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in PICTURE_SUFFIXES:
        raise ValueError(f"picture file must end in {' or '.join(PICTURE_SUFFIXES)}: {out}")
    shown = drawing(subgraph, title)
    digest = hashlib.sha256(json.dumps(shown).encode()).hexdigest()
    if suffix == ".svg" and out.is_file() and f"kg-subgraph-sha256:{digest}" in out.read_text(errors="ignore"):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    positions = _layout(shown)
    if suffix == ".svg":
        out.write_text(_svg(shown, positions, digest), encoding="utf-8")
    else:
        _png(shown, positions, out)
    return out


def _layout(shown: dict) -> dict[str, tuple[float, float]]:
    """Each node's position in [0, 1] x [0, 1], y upwards: a force layout with a fixed seed."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(node[0] for node in shown["nodes"])
    graph.add_edges_from((a, b) for a, b, _, _ in shown["edges"])
    if graph.number_of_nodes() == 0:
        return {}
    layout = nx.spring_layout(graph, seed=LAYOUT_SEED, k=3 / graph.number_of_nodes() ** 0.5, iterations=300)
    xs, ys = [float(p[0]) for p in layout.values()], [float(p[1]) for p in layout.values()]
    span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    return {node: ((float(p[0]) - min(xs)) / span_x if len(xs) > 1 else 0.5,
                   (float(p[1]) - min(ys)) / span_y if len(ys) > 1 else 0.5) for node, p in layout.items()}


def _colours(shown: dict) -> dict[str, str]:
    types = sorted({node[2] for node in shown["nodes"]})
    return {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(types)}


def _svg(shown: dict, positions: dict[str, tuple[float, float]], digest: str) -> str:
    def at(node_id: str) -> tuple[float, float]:
        x, y = positions[node_id]
        return MARGIN + x * (WIDTH - 2 * MARGIN), HEIGHT - MARGIN - y * (HEIGHT - 2 * MARGIN)

    colour = _colours(shown)
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, Arial, sans-serif">',
             f"<desc>kg-subgraph-sha256:{digest}</desc>", '<rect width="100%" height="100%" fill="white"/>']
    if shown["title"]:
        lines.append(f'<text x="{WIDTH / 2:.0f}" y="36" font-size="18" text-anchor="middle">{escape(shown["title"])}</text>')
    for a, b, width, _ in shown["edges"]:
        (x1, y1), (x2, y2) = at(a), at(b)
        lines.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#9a9a9a" '
                     f'stroke-opacity="0.7" stroke-width="{0.8 + 3.2 * width / STEPS:.2f}"/>')
    for a, b, _, names in shown["edges"]:
        (x1, y1), (x2, y2) = at(a), at(b)
        lines.append(f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2:.1f}" font-size="9" fill="#444444" '
                     f'text-anchor="middle" dominant-baseline="central" stroke="white" stroke-width="3" '
                     f'paint-order="stroke">{escape(names)}</text>')
    radius = {node[0]: 7 + 16 * node[4] / STEPS for node in shown["nodes"]}
    for node_id, _, entity_type, centre, _ in shown["nodes"]:
        x, y = at(node_id)
        lines.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius[node_id]:.1f}" fill="{colour[entity_type]}" '
                     f'stroke="{"black" if centre else "white"}" stroke-width="{3 if centre else 1}">'
                     f"<title>{escape(entity_type)}</title></circle>")
    for node_id, label, *_ in shown["nodes"]:  # above every circle and edge label, with a white halo
        x, y = at(node_id)
        lines.append(f'<text x="{x:.1f}" y="{y - radius[node_id] - 4:.1f}" font-size="11" text-anchor="middle" '
                     f'stroke="white" stroke-width="3" paint-order="stroke">{escape(label)}</text>')
    for i, (entity_type, fill) in enumerate(sorted(colour.items())):
        y = HEIGHT - 24 - 20 * (len(colour) - 1 - i)
        lines.append(f'<circle cx="30" cy="{y}" r="6" fill={quoteattr(fill)}/>'
                     f'<text x="44" y="{y}" font-size="11" dominant-baseline="central">{escape(entity_type)}</text>')
    lines.append("</svg>")
    return "\n".join(lines) + "\n"


def _png(shown: dict, positions: dict[str, tuple[float, float]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colour = _colours(shown)
    figure, axes = plt.subplots(figsize=(14, 10))
    axes.set_axis_off()
    if shown["title"]:
        axes.set_title(shown["title"])
    for a, b, width, names in shown["edges"]:
        (x1, y1), (x2, y2) = positions[a], positions[b]
        axes.plot([x1, x2], [y1, y2], color="#9a9a9a", alpha=0.7, linewidth=0.6 + 2.4 * width / STEPS, zorder=1)
        axes.text((x1 + x2) / 2, (y1 + y2) / 2, names, fontsize=6, color="#444444", ha="center", va="center", zorder=2,
                  bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})
    for node_id, label, entity_type, centre, size in shown["nodes"]:
        x, y = positions[node_id]
        axes.scatter([x], [y], s=120 + 900 * size / STEPS, color=colour[entity_type], zorder=3,
                     edgecolors="black" if centre else "white", linewidths=2.5 if centre else 0.8)
        axes.text(x, y, label, fontsize=8, ha="center", va="center", zorder=4)
    handles = [plt.Line2D([], [], marker="o", linestyle="", markersize=8, color=c, label=t) for t, c in colour.items()]
    axes.legend(handles=handles, loc="lower left", fontsize=8, frameon=False)
    figure.savefig(out, format="png", bbox_inches="tight", dpi=120)
    plt.close(figure)


def render_core(db_path: str | os.PathLike[str] | Warehouse | None, out: str | os.PathLike[str], top: int = 25) -> Path:
    """The picture of the graph's most connected core (the `top` nodes of highest degree), e.g. for the
    knowledge_graph materialization's metadata."""
    from kg_assets.query.graph import KnowledgeGraph

    core = KnowledgeGraph(db_path).core(top=top)
    return render_subgraph(core, out, title=f"Most connected {len(core.nodes)} entities")
