"""The divide step's first-sentence labeller: the shipped model-free CRF.

The algorithm, its features and its weights live in :mod:`veriscribe.labeller`; this
module names what the abstract nodes use.
"""

from veriscribe.labeller import Labeller

__all__ = ["Labeller"]
