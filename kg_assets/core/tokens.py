"""The offline tokenizer (bpe-openai ships its vocabularies): chunk sizes and prompt budgets count with it."""

from __future__ import annotations

from functools import lru_cache

DEFAULT_ENCODING = "o200k_base"  # the encoding of gpt-4o and its successors


@lru_cache(maxsize=4)
def encoding(name: str = DEFAULT_ENCODING):
    """The named encoding, loaded once per process (loading takes a while; encoding is fast)."""
    import bpe_openai

    return bpe_openai.get_encoding(name)


# bpe-openai refuses one call of 1,000,000 characters or more ("Input too long to encode safely"); its encoder is
# linear below that. Long texts are counted in windows of at most this many characters, cut at whitespace when
# the window has some, so the count stays linear and within the library's limit on any text.
WINDOW_CHARS = 16_384


def windows(text: str, size: int = WINDOW_CHARS) -> list[tuple[int, int]]:
    """(start, end) windows of at most `size` characters covering `text`, each cut before the last space or
    newline of its second half when there is one (a word stays whole with its leading space), else at `size`
    (one endless token)."""
    out, start, n = [], 0, len(text)
    while n - start > size:
        end = start + size
        cut = max(text.rfind(" ", start + size // 2, end), text.rfind("\n", start + size // 2, end))
        end = cut if cut > start else end
        out.append((start, end))
        start = end
    if start < n:
        out.append((start, n))
    return out


def count_tokens(text: str, name: str = DEFAULT_ENCODING) -> int:
    """Tokens of `text` in the named encoding, counted window by window when it is long (see `windows`):
    never raises for length, linear in the text. A cut text's count may differ from the whole one's by about a
    token per window."""
    encode = encoding(name).encode_ordinary
    if len(text) <= WINDOW_CHARS:
        return len(encode(text))
    return sum(len(encode(text[a:b])) for a, b in windows(text, WINDOW_CHARS))
