import os
import re
from pathlib import Path

import pytest

from kg_assets.core.documents import read_document
from kg_assets.core.files.inbox import scan_inbox

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "inbox"


def _read(tmp_path: Path, name: str, content: bytes, **kw) -> dict:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return read_document(tmp_path, name, **kw)


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
    row = read_document(pdf.parent, pdf.name)
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
    row = read_document(tmp_path, "gone.txt")
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


# --- hostile inbox entries -------------------------------------------------------------------------------


def _read_key(inbox: Path, key: str, **kw) -> dict:
    return read_document(inbox, key, **kw)


@pytest.fixture
def linked_inbox(tmp_path):
    """An inbox with every kind of symlink, next to a secret file outside it."""
    inbox = tmp_path / "inbox"
    (inbox / "sub").mkdir(parents=True)
    (inbox / "real.md").write_text("# Real\n\nAda Lovelace visited Paris.\n")
    (tmp_path / "secret.txt").write_text("TOP SECRET outside the inbox\n")
    (tmp_path / "outside_dir").mkdir()
    (tmp_path / "outside_dir" / "leak.txt").write_text("TOP SECRET in a folder outside the inbox\n")
    (inbox / "passwd.txt").symlink_to(tmp_path / "secret.txt")
    (inbox / "inside.md").symlink_to("real.md")
    (inbox / "loop.txt").symlink_to("loop.txt")
    (inbox / "dangling.txt").symlink_to("missing.txt")
    (inbox / "outside_dir").symlink_to(tmp_path / "outside_dir")
    (inbox / "sub" / "real.txt").write_text("Grace Hopper joined the Harvard lab.\n")
    (inbox / "linked_sub").symlink_to("sub")
    (inbox / "sub" / "up").symlink_to("..")
    os.mkfifo(inbox / "pipe.txt")  # reading it would block forever
    return inbox


def test_scan_gives_every_symlink_its_own_key_and_follows_folders_only_inside_the_inbox(linked_inbox):
    found = scan_inbox(linked_inbox)
    # sub/up -> .. is a loop wherever it is reached from, so it is listed (as a refusal) under both paths
    assert sorted(found) == ["dangling.txt", "inside.md", "linked_sub/real.txt", "linked_sub/up", "loop.txt",
                             "outside_dir", "passwd.txt", "pipe.txt", "real.md", "sub/real.txt", "sub/up"]


def test_symlinks_are_followed_only_inside_the_inbox_and_the_rest_get_a_clear_error(linked_inbox):
    rows = {key: _read_key(linked_inbox, key) for key in scan_inbox(linked_inbox)}
    assert rows["inside.md"]["status"] == "ok" and "Ada Lovelace" in rows["inside.md"]["text"]
    assert rows["linked_sub/real.txt"]["status"] == "ok" and "Grace Hopper" in rows["linked_sub/real.txt"]["text"]
    expected = {"passwd.txt": "outside the inbox", "outside_dir": "outside the inbox", "loop.txt": "symlink loop",
                "dangling.txt": "does not exist", "sub/up": "leads back to a folder it is in",
                "linked_sub/up": "leads back to a folder it is in", "pipe.txt": "not a regular file"}
    for key, message in expected.items():
        assert rows[key]["status"] == "error" and message in rows[key]["error"], (key, rows[key]["error"])
        assert rows[key].get("text") is None
    assert not any("TOP SECRET" in (row.get("text") or "") for row in rows.values())


@pytest.mark.parametrize("key", ["../secret.txt", "inbox/../../secret.txt", "sub/../../secret.txt", "./real.md", ""])
def test_partition_keys_that_leave_the_inbox_or_are_not_normalized_are_refused(linked_inbox, key):
    row = _read_key(linked_inbox, key)
    assert row["status"] == "error" and "not a relative path inside the inbox" in row["error"]
    assert row.get("text") is None


def test_an_absolute_partition_key_is_refused(linked_inbox, tmp_path):
    key = str(tmp_path / "secret.txt")
    row = _read_key(linked_inbox, key)
    assert row["status"] == "error" and "not a relative path inside the inbox" in row["error"]


def test_a_partition_key_through_a_folder_link_leaving_the_inbox_is_refused(linked_inbox):
    row = _read_key(linked_inbox, "outside_dir/leak.txt")
    assert row["status"] == "error" and "outside the inbox" in row["error"]
    assert row.get("text") is None


def _encrypted_pdf(algorithm: str, user_password: str) -> bytes:
    import io

    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=next(SAMPLE.rglob("*.pdf")))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_an_encrypted_pdf_that_an_empty_password_opens_is_read(tmp_path, algorithm):
    row = _read(tmp_path, "locked.pdf", _encrypted_pdf(algorithm, ""))
    assert row["status"] == "ok", row["error"]
    assert "Quantum Dynamics Lab" in row["text"]


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_an_encrypted_pdf_that_needs_a_password_gets_a_clear_error(tmp_path, algorithm):
    row = _read(tmp_path, "locked.pdf", _encrypted_pdf(algorithm, "user-secret"))
    assert row["status"] == "error"
    assert "encrypted PDF" in row["error"] and "password" in row["error"]
    assert len(row["content_hash"]) == 64


def test_deeply_nested_html_is_cut_and_the_row_says_so(tmp_path):
    html = ("<html><head><title>Deep</title></head><body><h1>Intro</h1><p>Ada Lovelace visited Paris.</p>"
            + "<div>" * 100_000 + "<p>Buried text.</p>" + "</div>" * 100_000 + "</body></html>")
    row = _read(tmp_path, "deep.html", html.encode())
    assert row["status"] == "ok", row["error"]
    assert row["title"] == "Deep" and row["headings"] == ["Intro"]
    assert "Ada Lovelace visited Paris." in row["text"]
    assert "Buried text" not in row["text"]
    assert "parsing stopped at line 1" in row["warning"] and "Excessive depth" in row["warning"]
    assert "dropped" in row["warning"]


def test_deeply_nested_html_with_no_text_before_the_cut_is_an_error(tmp_path):
    row = _read(tmp_path, "deep.html", ("<div>" * 50_000 + "<p>Buried text.</p>").encode())
    assert row["status"] == "error"
    assert "no text" in row["error"] and "Excessive depth" in row["error"]


def test_ordinary_html_has_no_warning(tmp_path):
    row = _read(tmp_path, "ok.html", b"<html><body>" + b"<div>" * 100 + b"<p>Ada Lovelace.</p>" + b"</div>" * 100)
    assert row["status"] == "ok" and row["text"] == "Ada Lovelace." and row["warning"] is None


def test_an_over_limit_file_gets_its_content_hash_without_being_read_whole(tmp_path):
    import hashlib

    content = b"word " * 1000
    row = _read(tmp_path, "big.txt", content, max_bytes=1000)
    assert row["status"] == "error"
    assert row["content_hash"] == hashlib.sha256(content).hexdigest()


ENGLISH = "Dr. Sarah Chen leads the AI team at the Quantum Dynamics Lab in Cambridge. She joined in 2020.\n" * 5


@pytest.mark.parametrize(("codec", "encoding"), [("utf-16-le", "utf-16-le"), ("utf-16-be", "utf-16-be"),
                                                 ("utf-32-le", "utf-32-le")])
def test_utf16_and_utf32_without_a_bom_are_decoded(tmp_path, codec, encoding):
    row = _read(tmp_path, "wide.txt", ENGLISH.encode(codec))
    assert row["status"] == "ok", row["error"]
    assert row["encoding"] == encoding
    assert row["text"] == ENGLISH


def test_utf16_with_a_bom_is_decoded(tmp_path):
    row = _read(tmp_path, "bom.md", "# Título\n\nZoë Müller".encode("utf-16"))
    assert row["status"] == "ok", row["error"]
    assert row["title"] == "Título" and "Zoë Müller" in row["text"]


def test_utf8_with_a_few_invalid_bytes_stays_utf8_and_warns(tmp_path):
    text = "Le café de Zoë Müller à Zürich est très réputé. " * 20
    head = text[:100].encode()
    row = _read(tmp_path, "damaged.txt", head + b"\xff" + text[100:].encode())
    assert row["status"] == "ok", row["error"]
    assert row["encoding"] == "utf-8"
    assert row["text"].count("Zoë Müller") == 20
    assert "1 byte" in row["warning"] and "not valid UTF-8" in row["warning"] and f"byte {len(head)}" in row["warning"]


def test_a_guessed_code_page_is_recorded_as_a_warning(tmp_path):
    text = "Le café de Zoë Müller à Zürich est très réputé. " * 20
    row = _read(tmp_path, "latin.txt", text.encode("cp1252"))
    assert row["status"] == "ok"
    assert row["encoding"] in row["warning"] and "guess" in row["warning"]


def test_valid_utf8_has_no_warning(tmp_path):
    row = _read(tmp_path, "fine.txt", "Zoë Müller in Zürich.".encode())
    assert row["status"] == "ok" and row["encoding"] == "utf-8" and row["warning"] is None


# -- structural anchors: every format's outline ---------------------------------------------------------

PLAIN = """Field Notes From Amman

Date: 2025-04-22

1. Arrival
The team met at the Royal Scientific Society.

1.1 First Day
Talks began at nine.

Travel Costs
------------
Flights were cheap.

RESULTS AND NEXT STEPS

People I Met

Dr. Layla Haddad runs a photonics group.
- Ask Lena Ortiz
- Send Samir Khalil's notes.

This line is prose, ending with a full stop.
"""


def test_plain_text_headings_are_numbered_underlined_all_caps_or_title_lines(tmp_path):
    from kg_assets.core.chunking import ChunkingConfig, chunk_text

    row = _read(tmp_path, "n.txt", PLAIN.encode())
    assert row["title"] == "Field Notes From Amman"
    assert row["headings"] == ["Field Notes From Amman", "1. Arrival", "1.1 First Day", "Travel Costs",
                               "RESULTS AND NEXT STEPS", "People I Met"]
    assert "## 1. Arrival\n" in row["text"] and "### 1.1 First Day" in row["text"] and "-----" not in row["text"]
    paths = {row["text"][c["char_start"]:c["char_end"]].split("\n")[-1]: c["section_path"]
             for c in chunk_text(row["text"], ChunkingConfig(max_tokens=16, overlap_tokens=0))}
    assert paths["Talks began at nine."] == "Field Notes From Amman > 1. Arrival > 1.1 First Day"
    assert paths["Flights were cheap."] == "Field Notes From Amman > Travel Costs"
    assert paths["This line is prose, ending with a full stop."] == "Field Notes From Amman > People I Met"


def test_a_pdf_without_bookmarks_gets_headings_from_its_font_sizes():
    from kg_assets.core.chunking import ChunkingConfig, chunk_documents
    import polars as pl

    pdf = next(SAMPLE.rglob("*.pdf"))
    row = read_document(pdf.parent, pdf.name)
    assert row["headings"][:3] == ["Quantum Dynamics Lab - Annual Report 2025", "1. Letter From the Director",
                                   "2. Research Highlights"]
    assert row["text"].startswith("# Quantum Dynamics Lab - Annual Report 2025\n") and "\n## 2. Research Highlights\n" in row["text"]
    docs = pl.DataFrame([{**row, "document_id": "r.pdf"}])
    for chunk in chunk_documents(docs, ChunkingConfig(max_tokens=60, overlap_tokens=0)).iter_rows(named=True):
        last = [m.group(1) for m in re.finditer(r"(?m)^## (.*)$", row["text"]) if m.start() <= chunk["char_start"]]
        expected = "Quantum Dynamics Lab - Annual Report 2025" + (f" > {last[-1]}" if last else "")
        assert chunk["section_path"] == expected, chunk["char_start"]


def test_pdf_bookmarks_are_its_outline(tmp_path):
    import io

    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=next(SAMPLE.rglob("*.pdf")))
    top = writer.add_outline_item("Annual Report", 0)
    writer.add_outline_item("2. Research Highlights", 0, parent=top)  # a line of page 1
    writer.add_outline_item("Money", 1, parent=top)  # no such line: a heading at the start of page 2
    out = io.BytesIO()
    writer.write(out)
    row = _read(tmp_path, "b.pdf", out.getvalue())
    assert row["headings"] == ["Annual Report", "2. Research Highlights", "Money"]
    assert row["text"].startswith("# Annual Report\n")
    assert "\n## 2. Research Highlights\n" in row["text"] and "\n\n## Money\n" in row["text"]
    assert "## 1. Letter From the Director" not in row["text"]  # bookmarks win over font sizes


def test_a_chat_has_its_participants_and_time_span_as_outline(tmp_path):
    lines = [
        b'{"user_id": "u1", "message_id": "m1", "timestamp": "2025-10-20T09:00:00Z", "content": "Hi", "display_name": "Ana"}',
        b'{"user_id": "u2", "message_id": "m2", "timestamp": "2025-10-21T10:30:00Z", "content": "Welcome!"}',
        b'{"user_id": "u1", "message_id": "m3", "timestamp": "2025-10-20T09:05:00Z", "content": "Thanks"}',
    ]
    row = _read(tmp_path, "c.jsonl", b"\n".join(lines))
    assert row["headings"] == ["Participants: Ana (u1), u2", "Messages: 3 from 2025-10-20T09:00:00Z to 2025-10-21T10:30:00Z"]
