"""The offline tokenizer (bpe-openai ships its vocabularies): chunk sizes and prompt budgets count with it."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from functools import lru_cache
from pathlib import Path

DEFAULT_ENCODING = "o200k_base"  # the encoding of gpt-4o and its successors


@lru_cache(maxsize=1)
def _bindings():
    """bpe-openai's compiled module, loaded directly: importing `bpe_openai` decodes three vocabularies in
    Python (o200k, cl100k and voyage3, about 1.2 s of CPU in every process) for a model table and a pure-Python
    `Encoding` this project never uses; the Rust tokenizer carries its own vocabulary. The counts are the
    library's own (`kg_assets_tests/test_chunking.py` compares them with `bpe_openai.get_encoding`)."""
    package = importlib.util.find_spec("bpe_openai")  # the package is found, not imported
    compiled = next(Path(package.submodule_search_locations[0]).glob("_bindings*.so"))
    loader = importlib.machinery.ExtensionFileLoader("bpe_openai._bindings", str(compiled))
    bindings = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(bindings)
    return bindings


@lru_cache(maxsize=4)
def counter(name: str = DEFAULT_ENCODING):
    """bpe-openai's Rust tokenizer of the named encoding (`count`, `encode`), loaded once per process."""
    return _bindings().tokenizer_for_encoding(name)


# bpe-openai refuses one call of 1,000,000 characters or more ("Input too long to encode safely"); its encoder is
# linear below that. Long texts are counted in windows of at most this many characters, cut at whitespace when
# the window has some, so the count stays linear and within the library's limit on any text.
WINDOW_CHARS = 16_384
LIBRARY_LIMIT = 1_000_000  # that limit, which the Rust tokenizer called here does not check itself


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


def count_tokens(text: str | None, name: str = DEFAULT_ENCODING) -> int:
    """Tokens of `text` in the named encoding (special-token text counted as ordinary text), counted window by
    window when it is long (see `windows`): never raises for length, linear in the text. A cut text's count may
    differ from the whole one's by about a token per window."""
    if not text:
        return 0
    if len(text) > WINDOW_CHARS:
        return sum(count_tokens(text[a:b], name) for a, b in windows(text, WINDOW_CHARS))
    if len(text) >= LIBRARY_LIMIT:  # only with WINDOW_CHARS raised past it
        raise ValueError("Input too long to encode safely")
    count = counter(name).count
    try:
        return count(text)
    except UnicodeEncodeError:  # a lone surrogate: counted as the replacement character, as bpe-openai does
        return count(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))
