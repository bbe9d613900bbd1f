"""Text algorithms the graphs' nodes and the evaluation share, with no LangGraph in them.

Facets and first sentences, TextRank key phrases, and repair of cut model replies.
"""
