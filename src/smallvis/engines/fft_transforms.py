"""The discrete transforms of the FFT-interpolation engine (:mod:`.fft`, and the frozen points'
fixed grid of :mod:`.fft_frozen`): node charges to their half spectrum and back, and the spectrum of a
radial kernel on the circulant grid (scipy.fft, imported when used).

Every transform runs one channel at a time: each 1-D transform of a line is the same arithmetic
whether it is done alone or with other channels, so the bits are those of one call over all channels,
while the transient arrays are one channel's (at the engine's largest grid, 1536 nodes per
dimension, one complex channel of the padded spectrum is 75 MB)."""

from __future__ import annotations

import numpy as np

__all__ = ["backward", "convolve", "forward", "mirror", "quadrant_spectrum", "spectrum"]


def forward(charges: np.ndarray, M: int, workers: int) -> np.ndarray:
    """The half spectrum (``rfftn``'s) of the node charges (channels first; the last axis already
    zero-padded to ``M``), zero-padded to ``M`` along the first node axis in 2-D."""
    from scipy import fft

    if charges.ndim != 3:
        return fft.rfft(charges, axis=-1, workers=workers)
    channels, N = charges.shape[:2]
    F = np.zeros((channels, M, M // 2 + 1), dtype=np.complex128)
    for c in range(channels):
        F[c, :N] = fft.rfft(charges[c], axis=-1, workers=workers)
        F[c] = fft.fft(F[c], axis=0, workers=workers, overwrite_x=True)
    return F


def backward(F: np.ndarray, N: int, M: int, workers: int) -> np.ndarray:
    """The inverse of :func:`forward` restricted to the first ``N`` nodes per dimension (the
    linear convolution; the rest is wrap-around)."""
    from scipy import fft

    if F.ndim == 3:
        F = fft.ifft(F, axis=1, workers=workers, overwrite_x=True)[:, :N]
    return fft.irfft(F, n=M, axis=-1, workers=workers)[..., :N]


def convolve(F: np.ndarray, S: np.ndarray, N: int, M: int, workers: int,
             channels: int | None = None, in_place: bool = False) -> np.ndarray:
    """``backward(F[:channels] * mirror(S))`` (2-D: the node potentials, contiguous
    ``(channels, N, N)``), one channel at a time; ``S`` is the quadrant spectrum of
    :func:`quadrant_spectrum` (1-D: the spectrum). With ``in_place`` the product overwrites ``F``
    (its last use)."""
    from scipy import fft

    channels = F.shape[0] if channels is None else channels
    if F.ndim == 2:
        return backward(F[:channels] * S, N, M, workers)
    spec = mirror(S)
    phi = np.empty((channels, N, N))
    for c in range(channels):
        if in_place:
            G = F[c]
            G *= spec
        else:
            G = F[c] * spec
        G = fft.ifft(G, axis=0, workers=workers, overwrite_x=True)[:N]
        phi[c] = fft.irfft(G, n=M, axis=-1, workers=workers)[:, :N]
    return phi


def quadrant_spectrum(K: np.ndarray, k: int, workers: int) -> np.ndarray:
    """The DCT-I of the quadrant ``K`` (``(1 or L + 1, L + 1)``): in 1-D the whole spectrum, in 2-D
    the first ``L + 1`` rows of it (:func:`mirror` gives the rest)."""
    from scipy import fft

    if k == 1:
        return fft.dct(K[0], type=1, workers=workers)
    return fft.dctn(K, type=1, workers=workers)


def mirror(S: np.ndarray) -> np.ndarray:
    """The 2-D spectrum of :func:`spectrum` from its quadrant ``S`` (1-D: ``S`` itself)."""
    if S.ndim == 1:
        return S
    return np.concatenate([S, S[-2:0:-1]], axis=0)


def spectrum(K: np.ndarray, k: int, workers: int) -> np.ndarray:
    """The DFT of the kernel on the circulant grid of length ``2 L`` per dimension, shaped as the
    half spectrum of :func:`forward`: the even extension of the quadrant ``K``
    (``(1 or L + 1, L + 1)``) has the real DFT ``DCT-I(K)``; in 2-D its first axis is mirrored
    back to ``2 L``."""
    return mirror(quadrant_spectrum(K, k, workers))
