"""The run planner: what the inbox sensor, the nightly schedule and `kg run` run, decided in one place.

Detection is content-hash based. Each current document in the warehouse carries the sha256 of the
bytes it was read from and the file's size:mtime signature at that time. A file whose signature still
matches is unchanged without being read; any other file is hashed, and only a different hash makes it
changed (a `touch` changes nothing). New files arrive on `today`, which becomes their partition key;
every other document is redone in the partition of the day it first arrived.

Everything here is pure: inputs are the inbox listing, the warehouse's document states and a hashing
callback, the output a `Plan` (and `advance` turns plans into run keys for a sensor cursor that stays a
few bytes whatever the corpus size).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

# Past this many documents a run processes its whole arrival days instead of a list in its run config:
# the list is stored with the run, and whole days cost little more (unchanged chunks are reused).
DOCUMENT_LIST_LIMIT = 2000


class PlanError(ValueError):
    """A request the planner cannot satisfy (e.g. reprocessing a document that exists nowhere)."""


@dataclass(frozen=True)
class Plan:
    """What one run must do. Empty when nothing changed: then nothing runs, not even consolidation."""

    new: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()  # (old key, new key) with the same bytes; also in deleted / new
    stale: tuple[str, ...] = ()  # made by another chunker or extractor version, or with failed chunks
    unchanged: int = 0
    touched: tuple[tuple[str, str], ...] = ()  # (id, new signature) of unchanged files with a new mtime or size
    days: tuple[str, ...] = ()  # arrival-day partition keys the run covers
    documents: tuple[str, ...] | None = None  # the documents of those days to process; None: all of them
    take_new: bool = False  # with documents None: also every inbox file the warehouse has not seen
    redo_extraction: bool = False  # re-extract even chunks done by the same extractor version (`only`)
    consolidate: bool = False
    fingerprint: tuple[tuple[str, str, str], ...] = field(default=(), repr=False)  # (reason, id, signature)

    @property
    def inbox_documents(self) -> int:
        return len(self.new) + len(self.changed) + len(self.stale) + self.unchanged

    @property
    def is_empty(self) -> bool:
        return not self.days and not self.consolidate

    @property
    def digest(self) -> str:
        """The same work gives the same digest; any new change to the inbox gives another."""
        payload = json.dumps([self.fingerprint, self.days, self.consolidate], separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def summary(self) -> str:
        parts = [f"{len(self.new):,} new", f"{len(self.changed):,} changed", f"{len(self.deleted):,} deleted"]
        if self.renamed:
            parts.append(f"{len(self.renamed):,} renamed")
        parts += [f"{len(self.stale):,} stale", f"{self.unchanged:,} unchanged"]
        return ", ".join(parts)


def frame_digest(frame: pl.DataFrame) -> str:
    """A short digest of a small frame's rows (e.g. the manual link decisions a consolidation applied)."""
    rows = json.dumps(sorted(map(str, frame.rows())), separators=(",", ":"))
    return hashlib.sha256(rows.encode()).hexdigest()[:16]


def plan_work(
    inbox: Mapping[str, str],
    known: pl.DataFrame | None,
    today: str,
    hash_of: Callable[[str], str | None],
    *,
    stale: Collection[str] = (),
    consolidate: bool = False,
    everything: bool = False,
    only: Sequence[str] | None = None,
    list_limit: int = DOCUMENT_LIST_LIMIT,
) -> Plan:
    """Compare the inbox with the warehouse and say what to run.

    `inbox`: partition-free document key -> file signature (`scan_inbox`). `known`: the current documents
    (document_id, arrival_day, content_hash, file_signature), None before any was built. `hash_of(key)`: the content hash of an inbox
    entry, None when it has none (unreadable: the documents step records why). `stale`: documents whose
    chunks or extractions must be redone. `consolidate`: the graph is out of date even if no document is.
    `everything`: redo every day. `only`: just these documents, wherever they are.
    """
    columns = ("document_id", "arrival_day", "content_hash", "file_signature")
    rows = {} if known is None else {r[0]: r[1:] for r in known.select(columns).iter_rows()}
    if only is not None:
        return _plan_only(list(only), inbox, rows, today)

    new = sorted(k for k in inbox if k not in rows)
    deleted = sorted(k for k in rows if k not in inbox)
    changed, touched, unchanged = [], [], 0
    for key, signature in inbox.items():
        if key not in rows:
            continue
        _, stored_hash, stored_signature = rows[key]
        if signature == stored_signature:
            unchanged += 1
        elif hash_of(key) == stored_hash:
            unchanged += 1
            touched.append((key, signature))
        else:
            changed.append(key)
    changed.sort()
    # A rename is a deletion plus an arrival with the same bytes; hashing new files is only worth it then.
    by_hash: dict[str, str] = {rows[k][1]: k for k in deleted if rows[k][1]}
    renamed = tuple(sorted((by_hash[h], k) for k in new if deleted and (h := hash_of(k)) in by_hash))
    stale_ids = sorted(set(stale) & set(rows) - set(changed) - set(deleted))
    unchanged -= len(set(stale_ids) & set(inbox))

    redo = sorted({*changed, *deleted, *stale_ids})
    days = {rows[k][0] for k in redo}
    if new:
        days.add(today)
    if everything:
        days |= {row[0] for row in rows.values()}
    listed = [*new, *redo]
    whole_days = everything or len(listed) > list_limit
    fingerprint = tuple(
        [("new", k, inbox[k]) for k in new] + [("changed", k, inbox[k]) for k in changed]
        + [("deleted", k, rows[k][1] or "") for k in deleted] + [("stale", k, rows[k][1] or "") for k in stale_ids]
        + ([("everything", today, "")] if everything else [])
    )
    return Plan(
        new=tuple(new), changed=tuple(changed), deleted=tuple(deleted), renamed=renamed, stale=tuple(stale_ids),
        unchanged=unchanged, touched=tuple(sorted(touched)), days=tuple(sorted(d for d in days if d)),
        documents=None if whole_days else tuple(sorted(listed)), take_new=whole_days and bool(new),
        consolidate=consolidate, fingerprint=fingerprint,
    )


def _plan_only(keys: list[str], inbox: Mapping[str, str], rows: Mapping[str, tuple], today: str) -> Plan:
    unknown = [k for k in keys if k not in rows and k not in inbox]
    if unknown:
        raise PlanError(f"no document {', '.join(map(repr, unknown))} in the inbox or the warehouse")
    days = sorted({rows[k][0] if k in rows else today for k in keys})
    return Plan(
        new=tuple(sorted(k for k in keys if k not in rows)), changed=tuple(sorted(k for k in keys if k in rows)),
        days=tuple(days), documents=tuple(sorted(set(keys))), redo_extraction=True,
        fingerprint=tuple(("only", k, inbox.get(k, "")) for k in sorted(set(keys))),
    )


@dataclass(frozen=True)
class DocumentWork:
    """What the documents step of one run does: read these (id -> arrival day), retire those."""

    read: dict[str, str]
    retire: list[str]
    ignored: list[str]  # listed documents that belong to a day outside the run


def documents_to_read(
    known: pl.DataFrame | None, inbox: Collection[str], days: Sequence[str], documents: Sequence[str] | None,
    take_new: bool,
) -> DocumentWork:
    """The documents step's share of a run over arrival `days`, given its run config (`documents`, `take_new`).

    Documents of those days still in the inbox are read again, those gone are retired. A listed document the
    warehouse has never seen, and with `take_new` every unseen inbox file, arrives on the run's last day.
    """
    arrival = {} if known is None else dict(known.select("document_id", "arrival_day").iter_rows())
    last_day = max(days)
    in_days = {k for k, day in arrival.items() if day in set(days)}
    if documents is None:
        scope, unseen, ignored = in_days, set(), []
    else:
        listed = set(documents)
        scope, unseen = listed & in_days, {k for k in listed if k not in arrival}
        ignored = sorted(listed - scope - unseen)
    if take_new:
        unseen |= {k for k in inbox if k not in arrival}
    inbox_set = set(inbox)
    read = {k: arrival[k] for k in sorted(scope) if k in inbox_set}
    read.update({k: last_day for k in sorted(unseen)})
    return DocumentWork(read=read, retire=sorted(k for k in scope if k not in inbox_set), ignored=ignored)


SENSOR_RETRIES = 2  # a failed run of one plan is requested again this often, then left to the nightly refresh


@dataclass(frozen=True)
class PlanCursor:
    """A sensor's memory: a generation counter, the digest of the plan last requested and how often that
    plan was requested again after a failed run (constant size)."""

    generation: int = 0
    requested: str = ""
    retries: int = 0

    @classmethod
    def parse(cls, cursor: str | None) -> PlanCursor:
        if not cursor:
            return cls()
        try:
            data = json.loads(cursor)
            return cls(int(data["generation"]), str(data["requested"]), int(data.get("retries", 0)))
        except (ValueError, KeyError, TypeError, AttributeError):
            return cls()  # a cursor of an older version: plan from the warehouse state alone

    def dump(self) -> str:
        return json.dumps({"generation": self.generation, "requested": self.requested, "retries": self.retries},
                          separators=(",", ":"))

    @property
    def run_key(self) -> str | None:
        """The run key of the plan last requested."""
        return f"{self.generation}:{self.requested}" if self.requested else None


def advance(cursor: PlanCursor, plan: Plan, requested_run_failed: bool = False) -> tuple[PlanCursor, str | None]:
    """The cursor after this plan, and the run key to request (None: nothing new to request).

    A plan already requested is not requested again while its run is pending or after it succeeded. When
    that run failed (a killed process, a locked warehouse: bad input fails chunks, not runs), the same plan
    is requested again under a new key, at most SENSOR_RETRIES times. An empty plan clears the memory, so the
    same change happening again later (a file deleted, re-added, re-deleted) is a new generation with a new
    run key, never one Dagster would skip as a duplicate.
    """
    if plan.is_empty:
        return PlanCursor(cursor.generation, ""), None
    if plan.digest == cursor.requested:
        if not requested_run_failed or cursor.retries >= SENSOR_RETRIES:
            return cursor, None
        retried = PlanCursor(cursor.generation + 1, plan.digest, cursor.retries + 1)
        return retried, retried.run_key
    requested = PlanCursor(cursor.generation + 1, plan.digest)
    return requested, requested.run_key
