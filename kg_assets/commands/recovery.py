"""Before `kg run` starts its run: fail the runs whose process died, free their pool slots, then wait for pools.

A run executed in process (`kg run`) has no run launcher that could check its health, so a `kill -9`, an
OOM kill or a power loss leaves it STARTED forever, holding its `llm` or `duckdb` pool slot, and every later
run waits on that slot. Each `kg run` therefore tags its run with the host, pid and start time of its process;
at the next start, a run with those tags whose process is gone (no such pid, a zombie, or a pid reused by a
process that started at another time) is marked FAILURE and its slots are freed. Slots still claimed by runs
that already finished are freed too. Runs launched by the daemon or the UI are watched by the instance's run
monitoring (dagster.yaml).

Waiting for a pool happens here, before the run exists, rather than inside Dagster's executor (whose wait
loop neither sleeps nor lets Ctrl-C through): it says at INFO what it waits for, sleeps between checks and
stops on Ctrl-C (KeyboardInterrupt).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

HOST_TAG = "kg/host"
PID_TAG = "kg/pid"
PROCESS_STARTED_TAG = "kg/process_started"  # the process's start time in clock ticks after boot (Linux)

ACTIVE = (dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED,
          dg.DagsterRunStatus.CANCELING)
POLL_S = 2.0
REPEAT_S = 60.0  # how often a long wait is reported again

Say = Callable[[str], None]


def _print(message: str) -> None:
    print(message, flush=True)


def process_tags() -> dict[str, str]:
    """Tags that let a later `kg run` tell whether this process still runs its run."""
    pid = os.getpid()
    tags = {HOST_TAG: socket.gethostname(), PID_TAG: str(pid)}
    started = process_started(pid)
    if started is not None:
        tags[PROCESS_STARTED_TAG] = started
    return tags


def process_started(pid: int) -> str | None:
    """Start time of a live process (field 22 of /proc/PID/stat), None if there is none or no /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # the command name in parentheses may hold spaces
    return None if fields[0] in ("Z", "X") else fields[19]  # a zombie has exited


def _process_gone(tags: dict[str, str]) -> bool:
    pid = int(tags[PID_TAG])
    if Path("/proc/self/stat").exists():
        started = process_started(pid)
        return started is None or started != tags.get(PROCESS_STARTED_TAG, started)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # a live process of another user
    return False


def abandoned(run: dg.DagsterRun) -> bool:
    """A `kg run` of this host whose process no longer exists."""
    tags = run.tags
    return (tags.get(HOST_TAG) == socket.gethostname() and tags.get(PID_TAG, "").isdigit()
            and _process_gone(dict(tags)))


def recover_abandoned_runs(instance: dg.DagsterInstance, say: Say = _print) -> list[str]:
    """Mark FAILURE every abandoned run and free its pool slots; free slots of finished runs. Returns run ids."""
    recovered = []
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=list(ACTIVE))):
        if not abandoned(run):
            continue
        instance.report_run_failed(
            run, f"the process that ran it (pid {run.tags[PID_TAG]} on {run.tags[HOST_TAG]}) is gone: "
                 "killed or crashed; marked failed by the next kg run")
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        recovered.append(run.run_id)
        say(f"kg run: run {run.run_id[:8]} was left {run.status.value} by a process that is gone "
            f"(pid {run.tags[PID_TAG]}); marked it failed and freed its pool slots")
    for pool, _, run_id in _slot_holders(instance):
        run = instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            instance.event_log_storage.free_concurrency_slots_for_run(run_id)
            say(f"kg run: freed pool {pool} slots still held by finished run {run_id[:8]}")
    return recovered


def _slot_holders(instance: dg.DagsterInstance, pools: Iterable[str] | None = None):
    """(pool, its limit, run id) for each run holding or waiting for a slot of `pools` (default: every pool)."""
    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        return
    keys = storage.get_concurrency_keys()
    for pool in sorted(keys if pools is None else set(pools) & keys):
        info = storage.get_concurrency_info(pool)
        for run_id in sorted(info.active_run_ids | {step.run_id for step in info.pending_steps}):
            yield pool, info.limit, run_id


def job_pools(job: dg.JobDefinition) -> set[str]:
    return {node.definition.pool for node in job.nodes if getattr(node.definition, "pool", None)}


@dataclass(frozen=True)
class Blocker:
    pool: str
    limit: int | None
    run: dg.DagsterRun

    def describe(self) -> str:
        tags = self.run.tags
        who = f"kg run, pid {tags[PID_TAG]}" if PID_TAG in tags else "launched by Dagster"
        return (f"pool {self.pool} (limit {self.limit if self.limit is not None else 'none'}) is in use by run "
                f"{self.run.run_id[:8]} ({who}, {self.run.status.value})")


def blockers(instance: dg.DagsterInstance, pools: Iterable[str]) -> list[Blocker]:
    """Unfinished runs holding or waiting for a slot of one of `pools` that is full: as many such runs as its
    limit (`duckdb`, limit 1: any other run), so runs on a lake with `llm` sized 2 start two at a time."""
    by_pool: dict[str, list[Blocker]] = {}
    for pool, limit, run_id in _slot_holders(instance, pools):
        run = instance.get_run_by_id(run_id)
        if run is not None and not run.is_finished:
            by_pool.setdefault(pool, []).append(Blocker(pool, limit, run))
    return [b for found in by_pool.values() if found[0].limit is None or len(found) >= found[0].limit for b in found]


def wait_for_pools(instance: dg.DagsterInstance, pools: Iterable[str], say: Say = _print,
                   poll_s: float = POLL_S) -> list[str]:
    """Recover abandoned runs, then return once no other live run holds a slot of `pools`.

    Each check first recovers runs that died meanwhile. KeyboardInterrupt (Ctrl-C) stops the wait.
    Returns the ids of the runs it marked failed."""
    pools = set(pools)
    started = time.monotonic()
    last_said = -REPEAT_S
    recovered = recover_abandoned_runs(instance, say)
    while waiting := blockers(instance, pools):
        now = time.monotonic()
        if now - last_said >= REPEAT_S:
            waited = f" (waited {now - started:.0f} s)" if now > started + 1 else ""
            say("kg run: waiting" + waited + ": " + "; ".join(b.describe() for b in waiting) + " (Ctrl-C stops)")
            last_said = now
        time.sleep(poll_s)
        recovered += recover_abandoned_runs(instance, say)
    return recovered
