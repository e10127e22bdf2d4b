"""PDF figures (seed 000, multimodal): images and captions read from real PDFs made with fpdf2, a figure's
own chunk and graph node offline."""

import io
from pathlib import Path

import pytest

from kg_assets.core.documents import read_document
from kg_assets.definitions import build_definitions
from kg_assets.storage.warehouse import Warehouse
from kg_assets_tests.conftest import Project, ephemeral_instance, project_settings

CAPTION = "Figure 3: The Helix sensor array built by Northwind Robotics in Lisbon."


def png(color: str = "tab:blue") -> bytes:
    """A small chart as PNG bytes, drawn with matplotlib (no file leaves the test)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 1.5), dpi=50)
    ax.bar(["a", "b", "c"], [3, 1, 2], color=color)
    out = io.BytesIO()
    fig.savefig(out, format="png")
    plt.close(fig)
    return out.getvalue()


def figure_pdf(pages: list[tuple[list[str], list[bytes]]]) -> bytes:
    """A PDF whose pages hold these text lines and embedded images (each image after the page's first line)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for lines, images in pages:
        pdf.add_page()
        if lines:
            pdf.multi_cell(0, 6, lines[0], new_x="LMARGIN", new_y="NEXT")
        for image in images:
            pdf.image(io.BytesIO(image), w=60)
        for line in lines[1:]:
            pdf.multi_cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def corrupt(pdf: bytes, image: bytes) -> bytes:
    """The PDF with the compressed stream of `image` overwritten by garbage of the same length."""
    import zlib

    from pypdf import PdfReader

    raw = bytearray(pdf)
    reader = PdfReader(io.BytesIO(pdf))
    xobject = reader.pages[0]["/Resources"]["/XObject"]
    stream = next(iter(xobject.values())).get_object()
    data = stream._data  # the stream as stored in the file (compressed)
    at = bytes(raw).find(data)
    assert at > 0 and zlib.decompress(data)
    raw[at : at + len(data)] = b"\x00garbage" * (len(data) // 8) + b"\x00" * (len(data) % 8)
    return bytes(raw)


REPORT = [
    (["Helix Annual Review", "Dr. Sarah Chen leads the Helix project at Quantum Dynamics Lab."], []),
    (["Results of the field trial.", CAPTION], [png()]),
]


def _read(tmp_path: Path, name: str, raw: bytes) -> dict:
    (tmp_path / name).write_bytes(raw)
    return read_document(tmp_path, name)


def test_a_pdf_figure_is_read_with_its_page_number_and_caption(tmp_path):
    row = _read(tmp_path, "helix.pdf", figure_pdf(REPORT))
    assert row["status"] == "ok", row["error"]
    [figure] = row["figures"]
    assert (figure["page"], figure["figure_number"], figure["error"]) == (2, 3, None)
    assert figure["caption"] == "The Helix sensor array built by Northwind Robotics in Lisbon."
    assert len(figure["image_sha256"]) == 64


def test_images_without_a_caption_are_numbered_in_document_order_and_a_corrupt_one_is_recorded(tmp_path):
    first, second = png("tab:red"), png("tab:green")
    pdf = figure_pdf([(["Page one."], [first]), (["Page two."], [second])])
    row = _read(tmp_path, "plain.pdf", corrupt(pdf, first))
    assert row["status"] == "ok"
    one, two = row["figures"]
    assert (one["page"], one["figure_number"], one["image_sha256"]) == (1, 1, None)
    assert "cannot be decoded" in one["error"]
    assert (two["page"], two["figure_number"], two["error"]) == (2, 2, None)


@pytest.fixture
def figure_project(tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "helix.pdf").write_bytes(figure_pdf(REPORT))
    db = tmp_path / "warehouse.duckdb"
    with ephemeral_instance() as instance:
        yield Project(inbox, Warehouse(db), instance, build_definitions(project_settings(inbox, db)))


def test_offline_a_figure_is_a_chunk_and_a_node_with_the_entities_its_caption_names(figure_project):
    p = figure_project
    assert p.run_all().success

    def sql(query: str, **params) -> list[tuple]:
        return p.sql(query, **params).rows()

    [chunk] = sql("SELECT chunk_id, text, page, figure_number, section_path FROM kg.chunks WHERE kind = 'figure'")
    assert chunk[1:] == ("Figure 3 (page 2): The Helix sensor array built by Northwind Robotics in Lisbon.", 2, 3,
                         "Figure 3 (page 2)")
    assert sql("SELECT count(*) FROM kg.chunks WHERE kind = 'text'")[0][0] >= 1
    names = {r[0] for r in sql("SELECT name FROM kg.entity_mentions WHERE chunk_id = $c", c=chunk[0])}
    assert {"helix.pdf Figure 3", "Northwind Robotics", "Lisbon"} <= names
    depicted = {r[0] for r in sql(
        "SELECT target_name FROM kg.local_relations WHERE chunk_id = $c AND relation_type = 'depicts'", c=chunk[0])}
    assert {"Northwind Robotics", "Lisbon"} <= depicted
    [node] = sql("SELECT n.entity_type, n.description FROM kg.graph_nodes n WHERE n.label = 'helix.pdf Figure 3' "
                   "AND n.valid_until IS NULL")
    assert node[0] == "FIGURE" and "Helix sensor array" in node[1]


VISION_MODEL = "test-vision"
DESCRIPTION = "The chart shows Kenji Tanaka at the Aurora Observatory in Chile."
NAMES = {"Northwind Robotics": "ORGANIZATION", "Lisbon": "LOCATION", "Sarah Chen": "PERSON",
         "Quantum Dynamics Lab": "ORGANIZATION", "Helix": "PRODUCT", "Kenji Tanaka": "PERSON",
         "Aurora Observatory": "ORGANIZATION", "Chile": "LOCATION"}


@pytest.fixture
def vision_project(figure_project, openai_server):
    """`figure_project` extracting with the LLM engine and a vision model, against the local test server."""
    from kg_assets.testing.scripted_llm import extraction_responder

    p = figure_project
    [figure] = read_document(p.inbox, "helix.pdf")["figures"]
    openai_server.respond_when(figure["image_sha256"], DESCRIPTION, scope="image")
    openai_server.set_responder(extraction_responder(NAMES))
    p.defs = build_definitions(project_settings(
        p.inbox, p.warehouse.path, base_url=openai_server.base_url, vision_model=VISION_MODEL, timeout_s=5.0,
        prompt_price_per_1m=0.15, completion_price_per_1m=0.60, summary_min_fragments=0))
    p.server, p.image_sha256 = openai_server, figure["image_sha256"]
    return p


def test_a_vision_model_describes_the_figure_and_its_entities_trace_to_page_and_figure(vision_project):
    from kg_assets.testing.openai_requests import image_parts

    p = vision_project
    assert p.run_all().success
    vision = [r.body for r in p.server.records if image_parts(r.body)]
    assert len(vision) == 1 and vision[0]["model"] == VISION_MODEL
    [image] = image_parts(vision[0])
    assert image["media_type"].startswith("image/") and image["sha256"] == p.image_sha256
    # The description is extracted from like text, by the text model, with the same prompt.
    assert any(DESCRIPTION in str(r.body["messages"]) and r.body["model"] != VISION_MODEL for r in p.server.records)
    traced = p.sql("""SELECT m.name, c.kind, c.page, c.figure_number, c.document_id FROM kg.entity_mentions m
                      JOIN kg.chunks c USING (chunk_id) WHERE m.name IN ('Kenji Tanaka', 'Aurora Observatory')
                      ORDER BY m.name""").rows()
    assert traced == [("Aurora Observatory", "figure", 2, 3, "helix.pdf"), ("Kenji Tanaka", "figure", 2, 3, "helix.pdf")]
    [node] = p.sql("SELECT description FROM kg.graph_nodes WHERE label = 'helix.pdf Figure 3' AND valid_until IS NULL").rows()
    assert DESCRIPTION in node[0]
    [call] = p.sql("""SELECT l.model, l.status, l.prompt_tokens, l.completion_tokens, l.cost_usd, c.kind
                      FROM kg.llm_calls l JOIN kg.chunks c USING (chunk_id) WHERE l.output_format = 'vision'""").rows()
    assert call[:2] == (VISION_MODEL, "ok") and call[2] > 85 and call[3] > 0 and call[5] == "figure"
    assert call[4] == pytest.approx((call[2] * 0.15 + call[3] * 0.60) / 1e6)

    # A rebuilt warehouse is served from the cache: the image is part of the key, no request is sent.
    sent = p.server.calls
    Path(p.warehouse.path).unlink()
    assert p.run_all().success
    assert p.server.calls == sent
    assert p.sql("SELECT status FROM kg.llm_calls WHERE output_format = 'vision' AND status = 'cache_hit'").height == 1
    assert p.sql("SELECT count(*) AS n FROM kg.entity_mentions WHERE name = 'Kenji Tanaka'").item() == 1


SCAN_TEXT = "Minutes: Lena Ortiz met Northwind Robotics in Lisbon."


@pytest.fixture
def scanned_inbox(figure_project):
    """figure_project's inbox with a scanned PDF: one page that is only an image."""
    (figure_project.inbox / "scan.pdf").write_bytes(figure_pdf([([], [png("tab:gray")])]))
    return figure_project


def test_a_scanned_pdf_without_a_vision_model_keeps_its_clear_error(scanned_inbox):
    p = scanned_inbox
    assert p.run_all().success
    [(status, error)] = p.sql("SELECT status, error FROM kg.documents WHERE document_id = 'scan.pdf'").rows()
    assert status == "error" and error.startswith("PDF has no text layer (1 pages; scanned images need OCR first")
    assert p.sql("SELECT count(*) AS n FROM kg.chunks WHERE document_id = 'scan.pdf'").item() == 0


def test_a_scanned_page_goes_to_the_vision_model(scanned_inbox, openai_server):
    from kg_assets.testing.scripted_llm import extraction_responder

    p = scanned_inbox
    [page] = read_document(p.inbox, "scan.pdf", scanned_pages=True)["figures"]
    openai_server.respond_when(page["image_sha256"], SCAN_TEXT, scope="image")
    openai_server.set_responder(extraction_responder({**NAMES, "Lena Ortiz": "PERSON"}))
    p.defs = build_definitions(project_settings(p.inbox, p.warehouse.path, base_url=openai_server.base_url,
                                                vision_model=VISION_MODEL, timeout_s=5.0, summary_min_fragments=0))
    assert p.run_all().success
    [(status, title)] = p.sql("SELECT status, title FROM kg.documents WHERE document_id = 'scan.pdf'").rows()
    assert (status, title) == ("ok", "scan")
    rows = p.sql("""SELECT m.name, c.kind, c.page, c.figure_number FROM kg.entity_mentions m JOIN kg.chunks c
                    USING (chunk_id) WHERE m.document_id = 'scan.pdf' AND m.name = 'Lena Ortiz'""").rows()
    assert rows == [("Lena Ortiz", "figure", 1, 1)]


def test_kg_estimate_counts_a_call_per_figure_with_a_vision_model(scanned_inbox, openai_server, monkeypatch, capsys):
    import re

    from kg_assets.cli import main

    p = scanned_inbox
    for name, value in {"KG_INBOX": p.inbox, "KG_DUCKDB_PATH": p.warehouse.path,
                        "OPENAI_BASE_URL": openai_server.base_url}.items():
        monkeypatch.setenv(name, str(value))

    def estimate() -> dict[str, str]:
        assert main(["estimate", "--prompt-price", "0.15", "--completion-price", "0.6"]) == 0
        return dict(re.findall(r"^  (.+?)\s{2,}(.+)$", capsys.readouterr().out, re.M))

    without = estimate()
    assert without["figure calls"] == "off (no KG_VISION_MODEL)"
    assert without["documents"] == "2 (1 unreadable)"
    monkeypatch.setenv("KG_VISION_MODEL", VISION_MODEL)
    with_vision = estimate()
    assert with_vision["figure calls"].startswith(f"2 to {VISION_MODEL}")  # the caption's figure and the scan
    assert with_vision["documents"] == "2 (0 unreadable)"

    def low(out: dict[str, str]) -> int:
        return int(out["LLM calls"].split(" to ")[0].replace(",", ""))

    # The scan adds its figure chunk's extraction call and each figure its description call.
    assert low(with_vision) == low(without) + 3
    assert openai_server.calls == 0
