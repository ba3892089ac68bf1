"""The discrete transforms of the FFT-interpolation engine (:mod:`.fft`, and the frozen points'
fixed grid of :mod:`.fft_frozen`): node charges to their half spectrum and back, and the spectrum of a
radial kernel on the circulant grid (scipy.fft, imported when used)."""

from __future__ import annotations

import numpy as np

__all__ = ["backward", "forward", "spectrum"]


def forward(charges: np.ndarray, M: int, workers: int) -> np.ndarray:
    """The half spectrum (``rfftn``'s) of the node charges (channels first; the last axis already
    zero-padded to ``M``), zero-padded to ``M`` along the first node axis in 2-D."""
    from scipy import fft

    F = fft.rfft(charges, axis=-1, workers=workers)
    if charges.ndim == 3:
        padded = np.zeros((F.shape[0], M, F.shape[2]), dtype=F.dtype)
        padded[:, :F.shape[1]] = F
        F = fft.fft(padded, axis=1, workers=workers, overwrite_x=True)
    return F


def backward(F: np.ndarray, N: int, M: int, workers: int) -> np.ndarray:
    """The inverse of :func:`forward` restricted to the first ``N`` nodes per dimension (the
    linear convolution; the rest is wrap-around)."""
    from scipy import fft

    if F.ndim == 3:
        F = fft.ifft(F, axis=1, workers=workers, overwrite_x=True)[:, :N]
    return fft.irfft(F, n=M, axis=-1, workers=workers)[..., :N]


def spectrum(K: np.ndarray, k: int, workers: int) -> np.ndarray:
    """The DFT of the kernel on the circulant grid of length ``2 L`` per dimension, shaped as the
    half spectrum of :func:`forward`: the even extension of the quadrant ``K``
    (``(1 or L + 1, L + 1)``) has the real DFT ``DCT-I(K)``; in 2-D its first axis is mirrored
    back to ``2 L``."""
    from scipy import fft

    if k == 1:
        return fft.dct(K[0], type=1, workers=workers)
    S = fft.dctn(K, type=1, workers=workers)
    return np.concatenate([S, S[-2:0:-1]], axis=0)
