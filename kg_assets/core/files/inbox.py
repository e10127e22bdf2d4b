"""Which inbox entries are documents, under which partition keys, and what a key may read.

The inbox is a trust boundary. A partition key, whether the scan found it or someone added it through
the instance or the UI, is read only when it is a plain relative path whose real location, after every
symlink, stays inside the inbox. Any other entry is refused with a reason that becomes its document's
error, so every entry still gets a row and nothing outside the inbox is ever read.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

from kg_assets.core.files import DocumentError

SUPPORTED_SUFFIXES = {".txt": "txt", ".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".pdf": "pdf", ".jsonl": "chat"}


def source_type_of(name: str) -> str | None:
    return SUPPORTED_SUFFIXES.get(os.path.splitext(name)[1].lower())


def is_supported(name: str) -> bool:
    return source_type_of(name) is not None and not name.startswith(".")


class InboxMissing(FileNotFoundError):
    """The inbox folder itself is gone (an unmounted share?): nothing may be retracted on its account."""


def scan_present_inbox(inbox: Path) -> dict[str, str]:
    """`scan_inbox` of a folder that must exist. An empty folder retracts every document; a missing one is
    refused, so an unmounted share or a typo in KG_INBOX never empties the graph."""
    if not inbox.is_dir():
        raise InboxMissing(
            f"inbox {inbox} is not a folder (unmounted? a typo in KG_INBOX?): refusing to treat its documents as "
            "deleted; to retract everything, leave the folder in place and empty"
        )
    return scan_inbox(inbox)


def scan_inbox(inbox: Path) -> dict[str, str]:
    """Every document entry under the inbox: partition key -> signature of what reading it would see.

    A key is the entry's own path relative to the inbox, '/'-separated, so a symlink has a key of its own.
    A symlinked folder is walked when it leads to a folder inside the inbox that is not one it is in (a
    loop). Listed without being followed: every entry with a supported suffix whatever it is, and symlinks
    to folders that are not walked, so that reading them records why. Hidden names are skipped.
    """
    if not inbox.is_dir():
        return {}
    root = Path(os.path.realpath(inbox))
    found: dict[str, str] = {}
    # folder to list, its real path, its key prefix, real paths of the folders it is in
    pending = [(str(inbox), root, "", frozenset({root}))]
    while pending:
        folder, folder_real, prefix, within = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_symlink():
                    real = Path(os.path.realpath(entry.path))
                    is_folder = os.path.isdir(entry.path)  # follows the link; False when it dangles or loops
                else:  # no system call per file: its real path is its folder's, and scandir knows its kind
                    real = folder_real / entry.name
                    is_folder = entry.is_dir(follow_symlinks=False)
                if is_folder and real.is_relative_to(root) and real not in within:
                    pending.append((entry.path, real, f"{prefix}{entry.name}/", within | {real}))
                elif is_supported(entry.name) or (is_folder and entry.is_symlink()):
                    found[prefix + entry.name] = _signature(entry, real, root)
    return dict(sorted(found.items()))


def _signature(entry: os.DirEntry, real: Path, root: Path) -> str:
    if entry.is_symlink() and not (real.is_relative_to(root) and os.path.exists(entry.path)):
        return "link:" + os.readlink(entry.path)  # never stat what a refused link points to
    st = entry.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def signature_bytes(signature: str | None) -> int:
    """The file size a scan's signature records; 0 for a refused link's signature or none (read, it fails)."""
    size, _, rest = (signature or "").partition(":")
    return int(size) if size.isdigit() and rest else 0


def resolve_key(inbox: Path, key: str) -> Path:
    """The real path of the regular file a partition key reads; DocumentError unless it stays inside the inbox."""
    path = _key_path(inbox, key)
    try:
        real = Path(os.path.realpath(path, strict=True))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DocumentError(f"symlink loop ({_link_text(path)})") from exc
        if os.path.islink(path):
            raise DocumentError(f"symlink target does not exist ({_link_text(path)})") from exc
        raise
    root = Path(os.path.realpath(inbox))
    if not real.is_relative_to(root):
        raise DocumentError(f"symlink leads outside the inbox (to {real}); only symlinks within the inbox are followed")
    mode = real.stat().st_mode
    if stat.S_ISDIR(mode):
        parts = key.split("/")
        folders_it_is_in = {Path(os.path.realpath(inbox.joinpath(*parts[:i]))) for i in range(len(parts))}
        if real in folders_it_is_in:
            raise DocumentError(f"symlink loop: it leads back to a folder it is in ({_link_text(path)})")
        raise DocumentError("a folder, not a file")
    if not stat.S_ISREG(mode):
        raise DocumentError("not a regular file (a pipe, socket or device)")
    return real


def _key_path(inbox: Path, key: str) -> Path:
    """The path a partition key names, before any symlink is followed; only plain relative paths are keys."""
    parts = key.split("/")
    if not key or key.startswith("/") or "\x00" in key or any(part in ("", ".", "..") for part in parts):
        raise DocumentError(f"partition key {key!r} is not a relative path inside the inbox")
    return inbox.joinpath(*parts)


def _link_text(path: Path) -> str:
    return f"{path.name} -> {os.readlink(path)}" if path.is_symlink() else path.name


def file_content_hash(path: Path) -> str:
    """sha256 of a file's bytes, read in blocks, so memory stays flat whatever the file's size."""
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def entry_hash(inbox: Path, key: str) -> str:
    """The content hash change detection compares: of the file a key reads, or, for a symlink that is not
    followed, of its target text (as git hashes a symlink), so an unchanged refusal is not redone.

    Raises DocumentError or OSError when a key has neither (a bad key, a pipe, a missing file).
    """
    try:
        return file_content_hash(resolve_key(inbox, key))
    except DocumentError:
        path = _key_path(inbox, key)
        if not path.is_symlink():
            raise
        return hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest()
