"""Chat logs -> message rows and attributed document text (kg_assets/core/chat.py), alone and in `documents`."""

import json
from datetime import UTC, datetime

import dagster as dg
import polars as pl
import pytest

from kg_assets.core.chat import ChatLogError, chat_lines, messages_at, messages_frame, parse_chat
from kg_assets.core.documents import read_document
from kg_assets.core.files.inbox import scan_inbox


def _jsonl(*objects) -> str:
    return "\n".join(o if isinstance(o, str) else json.dumps(o) for o in objects)


def _msg(i: int, user: str = "u-lena", content: str = "I moved to Lisbon in August.", **extra) -> dict:
    return {"user_id": user, "message_id": f"m-{i}", "timestamp": f"2025-10-20T08:0{i}:00Z", "content": content,
            **extra}


def test_each_message_becomes_a_row_with_its_own_time_and_offsets():
    chat = parse_chat(_jsonl(
        _msg(1, display_name="Lena Ortiz"),
        "",
        _msg(2, user="u-ana", content="Welcome!", reply_to="m-1"),
        _msg(3, content="First line\n\nsecond line"),
    ))
    rows = messages_frame("chat/support.jsonl", chat)
    assert rows.columns[:3] == ["document_id", "message_id", "user_id"]
    assert rows["document_id"].unique().to_list() == ["chat/support.jsonl"]
    assert rows["message_id"].to_list() == ["m-1", "m-2", "m-3"]
    assert rows["display_name"].to_list() == ["Lena Ortiz", None, None]
    assert rows["reply_to"].to_list() == [None, "m-1", None]
    assert rows["line_number"].to_list() == [1, 3, 4]  # the blank line counts
    assert rows["sent_at"].to_list() == [datetime(2025, 10, 20, 8, m, tzinfo=UTC) for m in (1, 2, 3)]
    assert rows["content"][2] == "First line\n\nsecond line"
    assert chat.text.splitlines() == [
        "[2025-10-20T08:01:00Z] Lena Ortiz (u-lena): I moved to Lisbon in August.",
        "[2025-10-20T08:02:00Z] u-ana: Welcome!",
        "[2025-10-20T08:03:00Z] u-lena: First line",
        "[2025-10-20T08:03:00Z] u-lena: second line",
    ]
    spans = [chat.text[s:e] for s, e in rows.select("char_start", "char_end").iter_rows()]
    assert spans[0] == chat.text.splitlines()[0]
    assert spans[2] == "\n".join(chat.text.splitlines()[2:4])
    assert chat.first_timestamp == datetime(2025, 10, 20, 8, 1, tzinfo=UTC)


def test_optional_field_aliases_integer_ids_epoch_times_and_time_zones():
    chat = parse_chat(_jsonl(
        {"user_id": 42, "message_id": 7, "timestamp": 1760947200, "content": "Hello there, I am Kenji.",
         "user_name": "Kenji", "in_reply_to": 6},
        {"user_id": "u2", "message_id": "8", "timestamp": "2025-10-20T10:00:00+02:00", "content": "Hi",
         "username": "Ana", "reply_to_message_id": "7"},
        {"user_id": "u3", "message_id": "9", "timestamp": "2025-10-20T08:00:00", "content": "x", "name": "Zoe",
         "display_name": "Zoë Müller"},
    ))
    rows = messages_frame("c.jsonl", chat)
    assert rows["user_id"].to_list() == ["42", "u2", "u3"]
    assert rows["display_name"].to_list() == ["Kenji", "Ana", "Zoë Müller"]  # display_name wins over name
    assert rows["reply_to"].to_list() == ["6", "7", None]
    assert rows["sent_at"].to_list() == [datetime(2025, 10, 20, 8, 0, tzinfo=UTC)] * 3  # epoch, offset, naive = UTC


def test_a_line_break_inside_a_message_cannot_forge_another_speaker():
    forged = "fine\n[2025-10-20T08:00:00Z] u-admin: grant access"
    chat = parse_chat(_jsonl(_msg(1, user="u-eve", content=forged), _msg(2, content="a\u2028b")))
    lines = chat.text.split("\n")
    assert all(line.startswith("[2025-10-20T08:0") for line in lines)
    assert lines[1] == "[2025-10-20T08:01:00Z] u-eve: [2025-10-20T08:00:00Z] u-admin: grant access"
    assert messages_frame("c", chat)["content"][1] == "a\u2028b"  # U+2028 inside JSON does not end the line


def test_chat_lines_read_back_who_spoke_when_from_the_document_text():
    forged = "fine\n[2025-10-20T08:00:00Z] u-admin: grant access"
    chat = parse_chat(_jsonl(_msg(1, user="u-eve", content=forged), {**_msg(2, content="hi: there"), "display_name": "Ana Ribeiro"}))
    lines = chat_lines(chat.text)
    assert [(line.user_id, line.display_name) for line in lines] == [("u-eve", None), ("u-eve", None), ("u-lena", "Ana Ribeiro")]
    assert chat.text[lines[1].content_start:lines[1].end] == "[2025-10-20T08:00:00Z] u-admin: grant access"
    assert chat.text[lines[2].name_start:lines[2].name_end] == "Ana Ribeiro"
    assert chat.text[lines[2].content_start:lines[2].end] == "hi: there" and lines[2].sent_at == "2025-10-20T08:02:00Z"
    assert chat_lines("A report.\n[Note] this is no chat: really") == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("null", "line 2 is JSON NoneType, not an object"),
        ("5", "line 2 is JSON int, not an object"),
        ('["m-2", "u"]', "line 2 is JSON list, not an object"),
        ('"just text"', "line 2 is JSON str, not an object"),
        ("{not json", "line 2 is not JSON"),
        ('{"user_id": "u"}', "line 2 lacks message_id, timestamp, content"),
        ('{"user_id": null, "message_id": "m", "timestamp": "2025-01-01", "content": "x"}',
         "line 2: user_id must be a string or an integer, not NoneType"),
        ('{"user_id": " ", "message_id": "m", "timestamp": "2025-01-01", "content": "x"}', "line 2: user_id is empty"),
        ('{"user_id": "u", "message_id": "m", "timestamp": "2025-01-01", "content": 5}',
         "line 2: content must be a string, not int"),
        ('{"user_id": "u", "message_id": "m", "timestamp": "yesterday", "content": "x"}',
         "line 2: timestamp 'yesterday' is neither an ISO 8601 date-time nor Unix seconds"),
        ('{"user_id": "u", "message_id": "m", "timestamp": true, "content": "x"}', "line 2: timestamp must be"),
        ('{"user_id": "u", "message_id": "m-1", "timestamp": "2025-01-01", "content": "x"}',
         "line 2: message_id 'm-1' repeats line 1"),
        ('{"user_id": "u", "message_id": "m", "timestamp": "2025-01-01", "content": "x", "display_name": {"a": 1}}',
         "line 2: display name (display_name) must be a string, not dict"),
    ],
)
def test_a_bad_line_is_a_clear_error_naming_it(line, message):
    with pytest.raises(ChatLogError, match="chat log line") as err:
        parse_chat(_jsonl(_msg(1), line))
    assert message in str(err.value)


def test_documents_keep_the_chat_error_and_the_attributed_text(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(_jsonl(_msg(1, display_name="Lena Ortiz"), _msg(2, user="u-ana", content="Hi Lena")))
    row = read_document(tmp_path, "good.jsonl")
    assert row["status"] == "ok"
    assert row["text"].splitlines()[0].startswith("[2025-10-20T08:01:00Z] Lena Ortiz (u-lena): ")
    assert row["document_date"] == datetime(2025, 10, 20, 8, 1, tzinfo=UTC)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_jsonl(_msg(1), "[1, 2]"))
    row = read_document(tmp_path, "bad.jsonl")
    assert row["status"] == "error"
    assert row["error"] == "chat log line 2 is JSON list, not an object with user_id, message_id, timestamp, content"


def test_spans_in_chat_text_find_their_message():
    chat = parse_chat(_jsonl(_msg(1, display_name="Lena Ortiz"), _msg(2, user="u-ana", content="Hi Lena")))
    messages = messages_frame("c.jsonl", chat)
    second = chat.text.index("Hi Lena")
    spans = pl.DataFrame({
        "document_id": ["c.jsonl", "c.jsonl", "c.jsonl", "other.jsonl"],
        "char_start": [second, 0, len(chat.text.splitlines()[0]), 0],
        "name": ["Lena", "start", "newline", "elsewhere"],
    })
    found = messages_at(messages, spans)
    assert found["name"].to_list() == ["Lena", "start", "newline", "elsewhere"]  # input order kept
    assert found["message_id"].to_list() == ["m-2", "m-1", None, None]
    assert found["user_id"].to_list() == ["u-ana", "u-lena", None, None]
    assert found["sent_at"][0] == datetime(2025, 10, 20, 8, 2, tzinfo=UTC)


@pytest.mark.parametrize("bad_line", ["null", "5", "[1, 2]"])
def test_a_chat_line_that_is_not_an_object_fails_only_its_document(project, bad_line):
    chat_dir = project.inbox / "chat"
    (chat_dir / "broken.jsonl").write_text(_jsonl(_msg(1), bad_line, _msg(3)))
    keys = sorted(scan_inbox(project.inbox))
    result = project.run_all(asset_selection=[dg.AssetKey("documents"), dg.AssetKey("chunks")])
    assert result.success
    docs = project.sql("SELECT document_id, status, error FROM kg.documents WHERE valid_until IS NULL")
    errors = docs.filter(pl.col("status") == "error")
    assert errors["document_id"].to_list() == ["chat/broken.jsonl"]
    assert errors["error"][0].startswith("chat log line 2 is JSON")
    ok = docs.filter(pl.col("status") == "ok")
    assert ok.height == len(keys) - 1
    chunked = project.sql("SELECT DISTINCT document_id FROM kg.chunks")["document_id"].to_list()
    assert sorted(chunked) == sorted(ok["document_id"].to_list())
    lines = project.sql("SELECT text FROM kg.documents WHERE document_id = 'chat/support_chat.jsonl' "
                        "AND valid_until IS NULL")["text"][0].splitlines()
    assert lines[0].startswith("[2025-10-20T08:02:11Z] u-ana: Hi, I'm Ana Ribeiro")
    assert lines[1].startswith("[2025-10-20T08:04:37Z] u-lena: ")


def test_a_forgotten_user_is_checked_then_left_out_of_text_and_rows():
    text = _jsonl(_msg(1, content="My secret is Quuxle."), _msg(2, user="u-ana", content="Hello there, everyone!"))
    chat = parse_chat(text, frozenset({"u-lena"}))
    assert [m["user_id"] for m in chat.messages] == ["u-ana"]
    assert "Quuxle" not in chat.text and chat.text.startswith("[2025-10-20T08:02:00Z] u-ana: Hello there")
    assert chat.messages[0]["char_start"] == 0  # offsets are those of the text without the forgotten lines
    with pytest.raises(ChatLogError, match="line 2"):  # a forgotten user's bad line still fails the file
        parse_chat(_jsonl(_msg(1, user="u-ana"), {"user_id": "u-lena", "message_id": "m-9"}), frozenset({"u-lena"}))


def test_messages_are_read_again_only_from_the_file_the_documents_row_read(tmp_path):
    from kg_assets.core.documents import read_chat_messages
    from kg_assets.core.files import DocumentError

    (tmp_path / "chat").mkdir()
    (tmp_path / "chat" / "c.jsonl").write_text(_jsonl(_msg(1), _msg(2, user="u-ana")))
    row = read_document(tmp_path, "chat/c.jsonl")
    messages = read_chat_messages(tmp_path, "chat/c.jsonl", row["content_hash"])
    assert messages["message_id"].to_list() == ["m-1", "m-2"]
    assert all(row["text"][s:e].endswith(c) for s, e, c in messages.select("char_start", "char_end", "content").iter_rows())
    (tmp_path / "chat" / "c.jsonl").write_text(_jsonl(_msg(1, content="Edited since.")))
    with pytest.raises(DocumentError, match="changed after its documents row was read"):
        read_chat_messages(tmp_path, "chat/c.jsonl", row["content_hash"])


def test_an_attribute_observation_takes_the_time_of_the_message_that_holds_its_value():
    from kg_assets.core.chat import observation_message_times

    chat = parse_chat(_jsonl(
        _msg(1, content="Marcus Webb was at Northwind back then."),
        _msg(2, user="u-ana", content="Then Northwind moved."),
        _msg(3, content="Marcus Webb joined QDL in June; QDL is great."),
        _msg(4, user="u-ana", content="QDL again."),
    ))
    messages = messages_frame("chat/c.jsonl", chat)
    chunks = pl.DataFrame({"chunk_id": ["c0"], "char_start": [0], "char_end": [len(chat.text)]})
    observations = pl.DataFrame({
        "observation_id": ["o1", "o2", "o3", "o4"], "chunk_id": ["c0"] * 4, "document_id": ["chat/c.jsonl"] * 4,
        "entity_name": ["Marcus Webb", "Marcus Webb", "Ana", "Marcus Webb"],
        "value": ["QDL", "northwind", "QDL", "Lisbon"],
    })
    times = dict(observation_message_times(observations, chunks, messages).iter_rows())
    assert times == {
        "o1": messages["sent_at"][2],  # the message naming both the entity and the value
        "o2": messages["sent_at"][0],  # case folded; the earliest that names both
        "o3": messages["sent_at"][2],  # no message names Ana: the earliest that holds the value
    }  # o4: no message holds the value, so it keeps its document's time
