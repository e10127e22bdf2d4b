"""Pure extraction code shared by every extractor: prompts, answer parsing, sanitizing, row building."""
