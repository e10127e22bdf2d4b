"""The LLM extractor: an engine for OpenAI-compatible endpoints and its response cache.

The prompts and the parsing of answers are pure and live in `kg_assets.core.extraction`, importable
without openai or instructor.
"""
