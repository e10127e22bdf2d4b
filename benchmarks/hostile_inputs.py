"""Hostile inbox entries: what each becomes, how long it takes, and how much memory hashing needs.

    .venv/bin/python benchmarks/hostile_inputs.py [--hash-mb 500] [--skip-worst]

Prints three Markdown tables:

1. a bad-input corpus (symlinks out of the inbox, loops, dangling links, encrypted PDFs, deep HTML,
   UTF-16 without BOM, damaged UTF-8, an over-limit file, partition keys that leave the inbox), each
   read by `read_document` exactly as the `documents` asset reads it: status, error or warning, seconds;
2. the peak resident memory (VmHWM) of a fresh Python process that takes the content hash of a sparse
   file of `--hash-mb` MB, streamed (`file_content_hash`, what change detection does now) and read
   whole (`sha256(path.read_bytes())`, what it did before);
3. nested HTML by depth, and the worst cases that stay under the depth limit (20 MB of tags that make
   the parser walk the whole stack of open elements), in seconds.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from kg_assets.core.documents import extract_text, read_document  # noqa: E402
from kg_assets.core.files.html_text import MAX_DEPTH  # noqa: E402
from kg_assets.core.files.inbox import scan_inbox  # noqa: E402

SAMPLE_PDF = ROOT / "data" / "inbox" / "reports" / "annual_report_2025.pdf"
ENGLISH = "Dr. Sarah Chen leads the AI team at the Quantum Dynamics Lab in Cambridge.\n" * 20
FRENCH = "Le café de Zoë Müller à Zürich est très réputé. " * 20


def _encrypted_pdf(algorithm: str, password: str) -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=SAMPLE_PDF)
    writer.encrypt(user_password=password, owner_password="owner", algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _nested(depth: int) -> bytes:
    return ("<html><body><p>Text before the deep part.</p>" + "<div>" * depth + "deep" + "</div>" * depth).encode()


def build_corpus(base: Path) -> Path:
    inbox = base / "inbox"
    inbox.mkdir()
    (base / "secret.txt").write_text("outside the inbox\n")
    files = {
        "real.md": b"# Real\n\nAda Lovelace visited Paris.\n",
        "pdf/rc4_empty_password.pdf": _encrypted_pdf("RC4-128", ""),
        "pdf/aes256_empty_password.pdf": _encrypted_pdf("AES-256", ""),
        "pdf/aes256_user_password.pdf": _encrypted_pdf("AES-256", "secret"),
        "html/nested_100k.html": _nested(100_000),
        "text/utf16le_no_bom.txt": ENGLISH.encode("utf-16-le"),
        "text/utf16be_no_bom.txt": ENGLISH.encode("utf-16-be"),
        "text/damaged_utf8.txt": FRENCH[:100].encode() + b"\xff" + FRENCH[100:].encode(),
        "text/cp1252.txt": FRENCH.encode("cp1252"),
        "text/over_limit.txt": b"word " * 500_000,
    }
    for key, content in files.items():
        (inbox / key).parent.mkdir(parents=True, exist_ok=True)
        (inbox / key).write_bytes(content)
    (inbox / "links").mkdir()
    (inbox / "links" / "passwd.txt").symlink_to(base / "secret.txt")
    (inbox / "links" / "inside.md").symlink_to("../real.md")
    (inbox / "links" / "loop.txt").symlink_to("loop.txt")
    (inbox / "links" / "dangling.txt").symlink_to("missing.txt")
    (inbox / "links" / "up").symlink_to("..")
    return inbox


def corpus_table(inbox: Path) -> None:
    keys = [*scan_inbox(inbox), "../secret.txt", str(inbox.parent / "secret.txt")]
    print("| entry | status | error or warning | s |\n|---|---|---|---:|")
    for key in keys:
        started = time.perf_counter()
        row = read_document(inbox, key, max_bytes=2_000_000)
        seconds = time.perf_counter() - started
        note = (row["error"] or row.get("warning") or "").replace(str(inbox.parent), "…").replace("|", "\\|")
        print(f"| `{key.replace(str(inbox.parent), '…')}` | {row['status']} | {note} | {seconds:.3f} |")


def html_table(skip_worst: bool) -> None:
    print(f"\n| HTML (depth limit {MAX_DEPTH}) | MB | s | outcome |\n|---|---:|---:|---|")
    cases = {f"nested divs, depth {d:,}": _nested(d) for d in (12_500, 25_000, 50_000, 100_000)}
    if not skip_worst:
        under = MAX_DEPTH - 10  # html and body count too
        cases |= {
            f"depth {under} + stray end tags to 20 MB": ("<div>" * under + "</em>" * 4_000_000).encode(),
            f"depth {under} + flat divs to 20 MB": ("<div>" * under + "<div>x</div>" * 1_650_000).encode(),
            "20 MB of ordinary paragraphs": ("<p>Ada Lovelace visited Paris.</p>\n" * 580_000).encode(),
        }
    for name, html in cases.items():
        started = time.perf_counter()
        try:
            row = extract_text(html, "html", "x")
            outcome = row["warning"] or f"ok, {len(row['text']):,} chars"
        except ValueError as exc:
            outcome = f"error: {exc}"
        print(f"| {name} | {len(html) / 1e6:.1f} | {time.perf_counter() - started:.3f} | {outcome[:70]} |")


# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across exec.
_PEAK = """
import hashlib, re, sys
from pathlib import Path
path = Path(sys.argv[2])
if sys.argv[1] == "streamed":
    from kg_assets.core.files.inbox import file_content_hash
    digest = file_content_hash(path)
else:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
peak_kb = re.search(r"VmHWM:\\s+(\\d+)", Path("/proc/self/status").read_text()).group(1)
print(int(peak_kb) // 1024, digest[:12])
"""


def hash_table(size_mb: int) -> None:
    print(f"\n| content hash of a {size_mb} MB sparse file | peak RSS MB | s |\n|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.txt"
        with big.open("wb") as file:
            file.truncate(size_mb * 1024 * 1024)
        for how in ("streamed", "read whole"):
            started = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", _PEAK, how, str(big)], capture_output=True, text=True,
                                 check=True, cwd=ROOT).stdout.split()
            print(f"| {how} | {out[0]} | {time.perf_counter() - started:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hash-mb", type=int, default=500)
    parser.add_argument("--skip-worst", action="store_true", help="skip the 20 MB worst cases (about 10 s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus_table(build_corpus(Path(tmp)))
    hash_table(args.hash_mb)
    html_table(args.skip_worst)


if __name__ == "__main__":
    main()
