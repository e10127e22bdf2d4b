from pathlib import Path

import pytest

from kg_assets.core.documents import read_document, scan_inbox

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "inbox"


def _read(tmp_path: Path, name: str, content: bytes, **kw) -> dict:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return read_document(path, name, **kw)


def test_markdown_keeps_title_headings_and_date(tmp_path):
    row = _read(tmp_path, "a.md", b"# Launch Notes\nDate: 2025-03-14\n\n## Team\nDr. Sarah Chen leads.\n\n## Plans\nMore.\n")
    assert row["status"] == "ok"
    assert row["title"] == "Launch Notes"
    assert row["headings"] == ["Launch Notes", "Team", "Plans"]
    assert row["document_date"].date().isoformat() == "2025-03-14"
    assert len(row["content_hash"]) == 64


def test_html_drops_scripts_and_navigation_and_keeps_headings(tmp_path):
    html = b"""<html><head><title>Summit</title><meta name="date" content="2025-06-18">
    <script>var secret = 'tracking';</script><style>p{}</style></head>
    <body><nav>Home | About</nav><h1>Boston Summit</h1><p>Marcus Webb <b>joined</b> QDL.</p>
    <h2>Talks</h2><p>Second paragraph.</p></body></html>"""
    row = _read(tmp_path, "s.html", html)
    assert row["status"] == "ok", row["error"]
    assert row["title"] == "Summit"
    assert row["headings"] == ["Boston Summit", "Talks"]
    assert "tracking" not in row["text"] and "Home | About" not in row["text"]
    assert "# Boston Summit" in row["text"] and "## Talks" in row["text"]
    assert "Marcus Webb joined QDL." in row["text"]
    assert row["document_date"].date().isoformat() == "2025-06-18"


def test_sample_pdf_has_its_text_layer_extracted():
    pdf = next(SAMPLE.rglob("*.pdf"))
    row = read_document(pdf, pdf.name)
    assert row["status"] == "ok", row["error"]
    assert row["source_type"] == "pdf"
    assert "Quantum Dynamics Lab" in row["text"]
    assert row["document_date"] is not None


def test_chat_log_becomes_speaker_lines_dated_by_first_message(tmp_path):
    lines = [
        b'{"user_id": "u1", "message_id": "m1", "timestamp": "2025-10-20T09:00:00Z", "content": "I moved to Lisbon."}',
        b'{"user_id": "u2", "message_id": "m2", "timestamp": "2025-10-20T09:01:00Z", "content": "Welcome!"}',
    ]
    row = _read(tmp_path, "c.jsonl", b"\n".join(lines))
    assert row["status"] == "ok"
    assert row["source_type"] == "chat"
    assert row["text"].splitlines() == ["[2025-10-20T09:00:00Z] u1: I moved to Lisbon.", "[2025-10-20T09:01:00Z] u2: Welcome!"]
    assert row["document_date"].isoformat().startswith("2025-10-20T09:00:00")


def test_non_utf8_text_is_decoded_when_the_guess_is_confident(tmp_path):
    text = "Le café de Zoë Müller à Zürich est très réputé. " * 20
    row = _read(tmp_path, "latin.txt", text.encode("cp1252"))
    assert row["status"] == "ok", row["error"]
    assert row["encoding"] != "utf-8"
    assert "Zoë Müller" in row["text"]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.txt", b"", "empty document"),
        ("blank.md", b"  \n\t\n", "empty document"),
        ("binary.txt", b"\x00\x01\x02PK\x03\x04" * 100, "binary content"),
        ("bad.pdf", b"%PDF-1.4 this is not really a pdf", "PDF"),
        ("chat.jsonl", b'{"user_id": "u"}\n', "lacks message_id, timestamp, content"),
        ("chat2.jsonl", b"not json\n", "line 1 is not JSON"),
        ("undecodable.txt", bytes(range(0x80, 0x100)) * 8, "not valid UTF-8"),
    ],
)
def test_bad_documents_get_an_error_status_with_a_clear_message(tmp_path, name, content, message):
    row = _read(tmp_path, name, content)
    assert row["status"] == "error"
    assert message in row["error"]
    assert row["document_id"] == name


def test_oversized_documents_are_refused_before_reading(tmp_path):
    row = _read(tmp_path, "big.txt", b"word " * 1000, max_bytes=1000)
    assert row["status"] == "error"
    assert "over the 1,000-byte limit" in row["error"]
    assert row["byte_size"] == 5000


def test_a_vanished_file_is_an_error_not_a_crash(tmp_path):
    row = read_document(tmp_path / "gone.txt", "gone.txt")
    assert row["status"] == "error" and "cannot read file" in row["error"]


def test_scan_inbox_keys_are_relative_posix_paths_of_supported_files(tmp_path):
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "deeper" / "a.md").write_text("# A")
    (tmp_path / "b.txt").write_text("B")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden.txt").write_text("x")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "c.txt").write_text("x")
    found = scan_inbox(tmp_path)
    assert sorted(found) == ["b.txt", "sub/deeper/a.md"]
    (tmp_path / "b.txt").write_text("B changed")
    assert scan_inbox(tmp_path)["b.txt"] != found["b.txt"]
