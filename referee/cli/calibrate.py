"""`referee calibrate`: measure the speaker's own delay with a microphone and write it into the
config as ``[speech] output_delay_ms`` (see `referee.voice.calibrate` for how)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from referee.cli.common import UsageError, table_config
from referee.config import set_config_value

NO_MICROPHONE = (
    "no microphone found, so the speaker's delay cannot be measured here. Plug a USB microphone "
    "(or a USB sound card with a microphone) into the Pi, hold it against the speaker, and run "
    "referee calibrate again. Without one: a wired speaker on the jack, a USB speaker or an I2S "
    "HAT needs no setting; for a TV look up its audio delay (\"game mode\" makes it 20-40 ms, "
    "otherwise 50-150 ms) and write it as output_delay_ms = 40 under [speech] in the config")


def run_calibrate(args: argparse.Namespace, *, backend: Any = None, out: TextIO | None = None) -> int:
    from referee.voice.calibrate import (
        RATE,
        CalibrationError,
        PortAudioMicrophone,
        input_devices,
        measure,
    )
    from referee.voice.device import SoundDeviceBackend, SoundDeviceSink

    out = out if out is not None else sys.stdout
    config = table_config(args)
    try:
        audio = backend if backend is not None else SoundDeviceBackend()
    except Exception as exc:  # noqa: BLE001 - no sounddevice / PortAudio
        raise UsageError(f"PortAudio is not usable here ({exc}): sudo apt install libportaudio2, "
                         "then .venv/bin/pip install sounddevice") from None
    mics = input_devices(audio.query_devices)
    wanted = getattr(args, "mic", None)
    if wanted:
        mics = [(i, n) for i, n in mics if wanted.casefold() in n.casefold()]
    if not mics:
        print(NO_MICROPHONE if not wanted else
              f"no microphone matches {wanted!r}; leave out --mic to use the first one",
              file=out)
        return 1
    index, mic_name = mics[0]
    device = getattr(args, "device", None) or config.speech.get("device")
    sink = SoundDeviceSink(device, RATE, backend=audio, output_delay_ms=0.0)
    try:
        sink.start()
        if sink.problem:
            raise UsageError(f"{sink.problem}; referee doctor lists the sound devices")
        print(f"Playing {args.clicks} clicks on {sink.device.name if sink.device else device!r}, "
              f"listening on {mic_name!r}: hold the microphone against the speaker.", file=out)
        mic = PortAudioMicrophone(index, RATE, opener=audio.open_input)
        try:
            result = measure(sink, mic, clicks=args.clicks)
        except CalibrationError as exc:
            raise UsageError(str(exc)) from None
    finally:
        sink.close()
    print(result.summary(), file=out)
    value = round(result.median_ms, 1)
    if result.spread_ms > 5:
        print(f"The clicks disagree by {result.spread_ms:.1f} ms (a Bluetooth or wireless link?): "
              "a wired speaker keeps the go-word steady.", file=out)
    path = getattr(args, "config", None)
    if path and not args.dry_run:
        saved = set_config_value(path, "speech", "output_delay_ms", value)
        where = str(saved) if saved == Path(path) else (
            f"{saved}, this user's drop-in over {path} (which it may not write), merged whenever "
            "it loads that config")
        print(f"Wrote output_delay_ms = {value} under [speech] in {where}; restart the referee "
              "(sudo systemctl restart table-referee).", file=out)
    else:
        print(f"Add output_delay_ms = {value} under [speech] in the config.", file=out)
    return 0
