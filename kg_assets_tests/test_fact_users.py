"""Chat users: the name each speaker goes by and the person entity it links to (kg_assets/core/facts/users.py)."""

from datetime import UTC, datetime, timedelta

import polars as pl

from kg_assets.core import schemas
from kg_assets.core.facts.users import build_chat_users, introduced_name

T0 = datetime(2025, 10, 20, tzinfo=UTC)


def _messages(*rows) -> pl.DataFrame:
    return schemas.conform(pl.DataFrame([
        {"document_id": doc, "message_id": f"m{i}", "user_id": user, "display_name": name, "sent_at": T0 + timedelta(minutes=i),
         "content": "hi"} for i, (doc, user, name) in enumerate(rows)
    ], schema=schemas.MESSAGES), schemas.MESSAGES)


def _facts(*rows) -> pl.DataFrame:
    return schemas.conform(pl.DataFrame([
        {"fact_id": f"f{i}", "user_id": user, "content": content, "is_active": active, "valid_from": T0 + timedelta(minutes=i)}
        for i, (user, content, active) in enumerate(rows)
    ]), schemas.USER_FACTS)


ENTITIES = pl.DataFrame({
    "entity_id": ["e-lena", "e-lena-org", "e-sarah", "e-sarah2", "e-ana"],
    "name": ["Lena Ortiz", "Lena Ortiz", "Sarah Chen", "Sarah Chen", "Ana Ribeiro"],
    "normalized_name": ["LENA_ORTIZ", "LENA_ORTIZ", "SARAH_CHEN", "SARAH_CHEN_PHD", "ANA_RIBEIRO"],
    "entity_type": ["PERSON", "ORGANIZATION", "PERSON", "PERSON", "PERSON"],
    "aliases": [["Lena Ortiz"], ["Lena Ortiz"], ["Sarah Chen"], ["Dr. Sarah Chen", "Sarah Chen"], ["Ana"]],
    "mention_count": [5, 50, 9, 3, 2],
})


def test_a_name_comes_from_the_display_name_else_from_a_self_introduction():
    assert introduced_name("is Lena Ortiz") == "Lena Ortiz"
    assert introduced_name("is Ana Ribeiro, a PhD student at USP") == "Ana Ribeiro"
    assert introduced_name("goes by Kenji") == "Kenji"
    assert introduced_name("is a nurse at St. Mary's") is None
    assert introduced_name("is Catholic, mostly") is None  # one word before a comma is no introduction

    users = build_chat_users(
        _messages(("c1", "u-sarah", None), ("c1", "u-sarah", "Sarah Chen"), ("c2", "u-lena", None), ("c2", "u-x", None)),
        _facts(("u-lena", "loves hiking", True), ("u-lena", "is Lena Ortiz", True), ("u-x", "is Ana Ribeiro", False)),
        ENTITIES,
    )
    rows = {r["user_id"]: r for r in users.iter_rows(named=True)}
    assert (rows["u-sarah"]["name"], rows["u-sarah"]["name_source"]) == ("Sarah Chen", "display_name")
    assert (rows["u-sarah"]["message_count"], rows["u-sarah"]["document_count"]) == (2, 1)
    assert (rows["u-lena"]["name"], rows["u-lena"]["name_source"]) == ("Lena Ortiz", "self_introduction")
    assert rows["u-x"]["name"] is None and rows["u-x"]["entity_id"] is None  # a superseded introduction names no one


def test_a_name_links_to_the_most_mentioned_person_entity_by_name_or_alias():
    users = build_chat_users(_messages(("c1", "u-sarah", "Sarah Chen"), ("c1", "u-lena", "lena ortiz"),
                                       ("c1", "u-ana", "Ana")), _facts(), ENTITIES)
    links = dict(users.select("user_id", "entity_id").iter_rows())
    # Both Sarah Chen entities carry the name; the more mentioned one wins. The organization is never linked.
    assert links == {"u-ana": "e-ana", "u-lena": "e-lena", "u-sarah": "e-sarah"}
