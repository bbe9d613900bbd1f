"""Section retrieval: BM25 and dense indexes, and the summaries LLM-guided retrieval reads."""
