"""Measures of text and answers: novelty, fragments, ROUGE, recall, QA rates, bootstrap."""
