"""Bytes of a text document to str, with a warning whenever the result rests on a guess.

Order matters: a byte order mark decides; NUL bytes mean UTF-16/32 (which plain ASCII in UTF-16 also
is, as valid UTF-8) or binary; then UTF-8; then UTF-8 with a few damaged bytes; only then a guessed
legacy code page, and a guess is never silent.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from kg_assets.core.files import DocumentError

# The UTF-32 LE mark begins with the UTF-16 LE one, so it is tried first.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_WIDE_ENCODINGS = ["utf_16_le", "utf_16_be", "utf_32_le", "utf_32_be"]
# A guessed code page is taken only when its text is not a mess and reads as some language.
MAX_GUESS_CHAOS = 0.2
MIN_GUESS_COHERENCE = 0.3
_UNDECODABLE = re.compile("[\udc80-\udcff]")  # bytes that surrogateescape kept
_NON_ASCII = re.compile("[^\x00-\x7f]")


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str
    warning: str | None = None


def decode(raw: bytes) -> Decoded:
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            name = codecs.lookup(codec).name.removesuffix("-sig")
            try:
                return Decoded(raw.decode(codec), name)
            except UnicodeDecodeError as exc:
                raise DocumentError(f"starts with a {name} byte order mark but is not valid {name} (byte {exc.start})") from exc
    if b"\x00" in raw:
        return _wide(raw)
    try:
        return Decoded(raw.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as exc:
        return _damaged_utf8(raw, exc.start) or _guessed(raw, exc.start)


def _wide(raw: bytes) -> Decoded:
    """UTF-16 or UTF-32 without a byte order mark (their ASCII has NUL bytes), or else binary."""
    from charset_normalizer import from_bytes

    best = from_bytes(raw, cp_isolation=_WIDE_ENCODINGS).best()
    if best is None or best.chaos > MAX_GUESS_CHAOS:
        raise DocumentError("binary content (NUL bytes) in a text document")
    return Decoded(str(best), codecs.lookup(best.encoding).name)


def _damaged_utf8(raw: bytes, first_bad: int) -> Decoded | None:
    """UTF-8 with a few bad bytes (more valid multi-byte characters than bad bytes) stays UTF-8."""
    escaped = raw.decode("utf-8", errors="surrogateescape")
    bad = _UNDECODABLE.subn("", escaped)[1]  # counts without a list of matches
    if _NON_ASCII.subn("", escaped)[1] - bad <= bad:
        return None
    noun = "byte is" if bad == 1 else "bytes are"
    return Decoded(raw.decode("utf-8", errors="replace"), "utf-8",
                   f"{bad:,} {noun} not valid UTF-8 (the first at byte {first_bad}) and became U+FFFD")


def _guessed(raw: bytes, first_bad: int) -> Decoded:
    from charset_normalizer import from_bytes

    best = from_bytes(raw).best()
    if best is None or best.chaos > MAX_GUESS_CHAOS or best.coherence < MIN_GUESS_COHERENCE:
        raise DocumentError(
            f"not valid UTF-8 (byte {first_bad}: {raw[first_bad:first_bad + 4]!r}) and no confident encoding guess"
        )
    name = codecs.lookup(best.encoding).name
    return Decoded(str(best), name, f"not UTF-8: decoded as {name}, a guess (chaos {best.chaos:.2f}, "
                                    f"language coherence {best.coherence:.2f}); save the file as UTF-8 to be sure")
