"""The embedded backend: llama.cpp in this process (the ``local`` extra).

Everything here needs ``llama-cpp-python``, or serves only the code that does (the
sampler, the grammars, the copy guard, the contexts). Only the model factory imports it,
and only when it builds an embedded model, so that the server backends and the simulated
model work without the extra.
"""
