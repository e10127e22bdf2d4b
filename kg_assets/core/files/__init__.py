"""Inbox files to text: which entries are documents and what each may read (`inbox`), bytes to str
(`decoding`), and one module per format that needs a parser (`html_text`, `pdf_text`).

Every step refuses bad input with a `DocumentError` whose message becomes the document's error, and
bounds its work, so no file can stop or stall a run.
"""


class DocumentError(ValueError):
    """A document that cannot become text; the message is recorded on its row."""
