"""The research harness: scores, baselines, question sets and plots for the two jobs.

Nothing of the product imports it; its commands live under ``veriscribe eval``.
"""
