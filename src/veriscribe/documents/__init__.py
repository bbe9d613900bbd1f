"""Reading input: JATS and other article formats, guideline documents, question sets, JSON lines."""
