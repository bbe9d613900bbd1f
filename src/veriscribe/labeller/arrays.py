"""Numpy arrays as JSON: base64 of their bytes with dtype and shape."""

from __future__ import annotations

import base64
from typing import TypedDict

import numpy as np
import numpy.typing as npt

__all__ = ["EncodedArray", "decode_array", "encode_array"]

FloatArray = npt.NDArray[np.float64]


class EncodedArray(TypedDict):
    """An array as JSON: its dtype, its shape, and base64 of its bytes."""

    dtype: str
    shape: list[int]
    data: str


def decode_array(blob: EncodedArray) -> FloatArray:
    """Decode an array written by :func:`encode_array` (as float64)."""
    raw = base64.b64decode(blob["data"])
    array = np.frombuffer(raw, dtype=np.dtype(blob["dtype"]))
    decoded: FloatArray = array.reshape(blob["shape"]).astype(np.float64)
    return decoded


def encode_array(array: npt.ArrayLike, dtype: str) -> EncodedArray:
    """Encode an array as base64 of its bytes in ``dtype`` (e.g. ``"<f4"``)."""
    data = np.ascontiguousarray(array, dtype=np.dtype(dtype))
    return {
        "dtype": dtype,
        "shape": list(data.shape),
        "data": base64.b64encode(data.tobytes()).decode("ascii"),
    }
