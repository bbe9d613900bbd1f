"""Section retrieval indexes: BM25 and dense sentence embeddings."""
