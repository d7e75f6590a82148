"""Audio files that are not WAV (FLAC, OGG/Vorbis...), decoded with soundfile
(``pip install 'catalog[audio]'``) and stored as WAV by the Audio feature.

FLAC is lossless: its integer samples are stored as they decode, so a prepared example equals
the file's samples exactly as ``soundfile.read(path, dtype=...)`` gives them for the feature's
dtype (int16 for 16-bit files; int32 holds 24- and 32-bit files, at soundfile's full 32-bit
scale). `read_info` gives what a file holds, for inferring its feature.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import MissingDependencyError, SourceFormatError
from catalog.features import Audio

__all__ = ["decode_sound", "read_info", "soundfile_module"]


def soundfile_module() -> Any:
    """The soundfile module; MissingDependencyError naming the extra without it."""
    try:
        import soundfile
    except (ImportError, OSError):  # OSError: the wheel's libsndfile cannot load
        raise MissingDependencyError(
            "decoding FLAC and other non-WAV audio needs soundfile: pip install 'catalog[audio]'"
        ) from None
    return soundfile


def read_info(path: Path) -> tuple[int, int, str]:
    """``(sample rate, channels, soundfile subtype)`` of an audio file; SourceFormatError
    when soundfile cannot read it."""
    sf = soundfile_module()
    try:
        info = sf.info(str(path))
    except (RuntimeError, sf.LibsndfileError) as error:
        raise SourceFormatError(f"{path}: not an audio file soundfile can read ({error})") from None
    return int(info.samplerate), int(info.channels), str(info.subtype)


def decode_sound(path: Path, feature: Audio) -> np.ndarray[Any, Any]:
    """The samples of `path` as `feature` stores them: (n,) for mono, (n, channels) else;
    SourceFormatError when its sample rate or channels are not the feature's."""
    sf = soundfile_module()
    dtype = "int32" if feature.dtype.name == "int64" else feature.dtype.name
    try:
        samples, rate = sf.read(str(path), dtype=dtype, always_2d=True)
    except (RuntimeError, sf.LibsndfileError) as error:
        raise SourceFormatError(f"{path}: not an audio file soundfile can read ({error})") from None
    if rate != feature.sample_rate or samples.shape[1] != feature.channels:
        raise SourceFormatError(
            f"{path}: {rate} Hz, {samples.shape[1]} channel(s); the feature 'audio' holds "
            f"{feature.sample_rate} Hz, {feature.channels} channel(s)"
        )
    out: np.ndarray[Any, Any] = samples[:, 0] if feature.channels == 1 else samples
    return out
