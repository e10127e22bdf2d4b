"""The offline tokenizer (bpe-openai ships its vocabularies): chunk sizes and prompt budgets count with it."""

from __future__ import annotations

from functools import lru_cache

DEFAULT_ENCODING = "o200k_base"  # the encoding of gpt-4o and its successors


@lru_cache(maxsize=4)
def encoding(name: str = DEFAULT_ENCODING):
    """The named encoding, loaded once per process (loading takes a while; encoding is fast)."""
    import bpe_openai

    return bpe_openai.get_encoding(name)
