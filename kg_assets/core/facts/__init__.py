"""The user-facts memory (seed 001 with the time model of seed 002), pure Python over Polars frames.

rules.py     switch, rate, extractability, answer validation and snapping: the seed's rules
person.py    first person -> third person
records.py   what extractors get and return; the FactExtractor interface
dedup.py     the seed's three duplicate rules and the guards that keep distinct facts
keys.py      fact keys: which facts replace each other over time
memory.py    one user's memory in time order (dedup, supersession); the USER_FACTS row builder and rebuild
pipeline.py  learn_facts: messages -> facts, with the extractor it is given
context.py   the context block for prompts
words.py     tokens, stop words and stems shared with the evaluation
"""
