"""The model-free rhetorical labeller of the divide step (a linear-chain CRF)."""

from veriscribe.labeller.model import Labeller

__all__ = ["Labeller"]
