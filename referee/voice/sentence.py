"""A phrase said in pieces, heard as one sentence: how the pieces are joined, and its pauses.

A ruling is said from pieces rendered ahead of time (who and why, the margin in one or two
pieces, the count: `phrases.segments`). Joined naively, each piece keeps the silence its voice
put around it, and "by four hundred … twenty-three milliseconds" is heard as two numbers. Here
each piece is cut from just before its speech to just after it; pieces inside one number
(the next piece starts with a digit) are joined closer than the sentence's parts; and no pause
inside the joined sentence lasts longer than `MAX_PAUSE_S` (a voice's own pause at a colon is
shortened to it), so the longest silence inside a ruling stays under 120 ms in either voice.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from referee.voice.audio import ONSET_FLOOR_DB, ONSET_REL_DB, Clip, Samples, frame_levels_db

LEAD_S = 0.01  # kept before a piece's speech onset
TAIL_S = 0.025  # kept after a piece's last loud frame
GAP_S = 0.045  # silence added between two parts of a sentence (heard in all: about 80 ms)
NUMBER_GAP_S = 0.0  # ... between two pieces of one number (heard: about 35 ms, a word's gap)
MAX_PAUSE_S = 0.1  # no silence inside a joined sentence lasts longer


def tight(parts: Sequence[str]) -> list[bool]:
    """For each joint between `parts`, whether it is inside a number ("by 4 hundred" then
    "23 milliseconds.")."""
    return [after[:1].isdigit() for after in parts[1:]]


def join(clips: Sequence[Clip], inside: Sequence[bool] = ()) -> Clip:
    """Pieces of one phrase as one clip: each from just before its speech onset to just after
    its last loud frame, GAP_S apart (NUMBER_GAP_S where `inside[i]`: the joint after piece i is
    inside a number), then every pause longer than MAX_PAUSE_S shortened to it."""
    if len(clips) == 1:
        return clips[0]
    rate = clips[0].samplerate
    lead, tail = round(LEAD_S * rate), round(TAIL_S * rate)
    parts = []
    for i, clip in enumerate(clips):
        start = 0 if i == 0 else max(0, clip.onset - lead)
        last = i == len(clips) - 1
        end = len(clip.samples) if last else min(len(clip.samples), speech_end(clip) + tail)
        parts.append(clip.samples[start:end].astype(np.float32))
        if not last:
            gap = NUMBER_GAP_S if i < len(inside) and inside[i] else GAP_S
            parts.append(np.zeros(round(gap * rate), dtype=np.float32))
    joined = np.concatenate(parts)
    return Clip(shorten_pauses(joined, rate, MAX_PAUSE_S), rate, clips[0].onset)


def speech_end(clip: Clip) -> int:
    """The sample after the clip's last loud 1 ms frame."""
    levels = frame_levels_db(clip.samples, clip.samplerate)
    loud = np.nonzero(levels >= max(float(levels.max()) + ONSET_REL_DB, ONSET_FLOOR_DB))[0]
    win = max(1, round(clip.samplerate / 1000))
    return (int(loud[-1]) + 1) * win if len(loud) else len(clip.samples)


def pauses(samples: Samples, samplerate: int) -> list[tuple[int, int]]:
    """The silences between the first and last speech of a clip, as (start, length) in samples:
    runs of 1 ms frames more than 45 dB below its loudest (speech's threshold for the onset)."""
    levels = frame_levels_db(samples, samplerate)
    loud = levels >= max(float(levels.max()) + ONSET_REL_DB, ONSET_FLOOR_DB)
    win = max(1, round(samplerate / 1000))
    edges = np.flatnonzero(np.diff(loud.astype(np.int8)))  # i: frame i+1 differs from frame i
    found = []
    for a, b in zip(edges, edges[1:], strict=False):
        if loud[a] and not loud[a + 1]:  # loud → quiet at a+1, back to loud at b+1
            found.append(((int(a) + 1) * win, (int(b) - int(a)) * win))
    return found


def longest_pause_ms(samples: Samples, samplerate: int) -> float:
    """The longest silence inside a phrase, in milliseconds (0 for one unbroken sound)."""
    return max((n for _, n in pauses(samples, samplerate)), default=0) * 1000 / samplerate


def shorten_pauses(samples: Samples, samplerate: int, longest_s: float) -> Samples:
    """`samples` with the middle of every pause longer than `longest_s` taken out (what stays
    of it is silence below speech's threshold: no click where it is cut)."""
    keep = round(longest_s * samplerate)
    cuts = [(start + keep // 2, start + length - (keep - keep // 2))
            for start, length in pauses(samples, samplerate) if length > keep]
    if not cuts:
        return samples
    pieces, at = [], 0
    for lo, hi in cuts:
        pieces.append(samples[at:lo])
        at = hi
    pieces.append(samples[at:])
    return np.concatenate(pieces).astype(np.float32)
