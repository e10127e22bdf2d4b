"""User-fact extractors behind the `FactExtractor` interface (kg_assets/core/facts/records.py): the offline
heuristic, and the prompt and response model of the LLM path."""
