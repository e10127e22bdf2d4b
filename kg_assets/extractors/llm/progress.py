"""What a long extraction says while it runs: chunks done of all, time so far, and the time left."""

from __future__ import annotations

PROGRESS_EVERY_CHUNKS = 100  # extraction progress is reported every this many chunks,
PROGRESS_EVERY_S = 30.0  # and every this many seconds, also while no chunk finishes


def progress_message(done: int, total: int, elapsed_s: float) -> str:
    """'extracted 40/150 chunks in 1m20s; about 3m40s left' (the rate so far, projected)."""
    left = f"; about {duration(elapsed_s / done * (total - done))} left" if 0 < done < total else ""
    return f"extracted {done:,}/{total:,} chunks in {duration(elapsed_s)}{left}"


def duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
