"""Extractors behind one small interface: the offline heuristic baseline and LLM providers."""
