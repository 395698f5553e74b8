"""The sound device on a Pi, against a PortAudio stand-in (tests/fakeaudio.py): chosen by name,
timed from PortAudio's own clock, watched while it plays, waited for when it is late, and
paused for (with the reason on the scoreboard) when it goes silent."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.config import ConfigError, default_config, load_config
from referee.voice.device import OutputDevice, SoundDeviceSink, choose_device
from tests.fakeaudio import FakePortAudio
from tests.pinfactories import pi_clock

# What PortAudio lists on a Pi 5 with a USB speaker: HDMI cards first, ALSA's plugins last.
PI5 = [
    "vc4-hdmi-0: MAI PCM i2s-hifi-0 (hw:0,0)",
    "vc4-hdmi-1: MAI PCM i2s-hifi-0 (hw:1,0)",
    "USB Audio Device: - (hw:2,0)",
    "sysdefault",
    "default",
]
USB = "USB Audio Device: - (hw:2,0)"


def wait_for(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def devices(names: list[str], default: str | None = None) -> list[OutputDevice]:
    return [OutputDevice(i, n, 48000.0, n == default) for i, n in enumerate(names)]


# -- choosing -----------------------------------------------------------------------------------


def test_a_device_is_chosen_by_a_fragment_of_its_name() -> None:
    listed = devices(PI5, default="default")
    assert choose_device(listed, "usb").name == USB  # type: ignore[union-attr]
    assert choose_device(listed, "  USB Audio ").name == USB  # type: ignore[union-attr]
    assert choose_device(listed, "hdmi-1").index == 1  # type: ignore[union-attr]
    assert choose_device(listed, 2).name == USB  # type: ignore[union-attr]
    assert choose_device(listed, None).name == "default"  # type: ignore[union-attr]
    assert choose_device(listed, "HiFiBerry") is None
    assert choose_device(devices(PI5[:3]), None).is_hdmi  # no default: the first, HDMI on a Pi 5


def test_the_config_accepts_a_sound_device_and_a_speaker_delay(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    base = Path("hardware/config.example.toml").read_text()
    path.write_text(base.replace("[speech]", '[speech]\ndevice = "USB"\noutput_delay_ms = 48.5', 1))
    config = load_config(path)
    assert config.speech["device"] == "USB" and config.speech["output_delay_ms"] == 48.5
    for bad, says in [('device = ""', "device = '' in [speech]"),
                      ("device = true", "device = True in [speech]"),
                      ("output_delay_ms = -3", "output_delay_ms = -3 in [speech] must be 0-1000"),
                      ('output_delay_ms = "40"', "output_delay_ms = '40' in [speech]")]:
        path.write_text(base.replace("[speech]", "[speech]\n" + bad, 1))
        with pytest.raises(ConfigError, match="^" + re.escape(says)):
            load_config(path)


# -- DAC time -------------------------------------------------------------------------------------


def test_dac_time_comes_from_portaudio_clock_not_from_when_python_ran() -> None:
    """PortAudio stamps currentTime when its thread wakes; the Python callback may start
    milliseconds later on a busy Zero 2 W. The frame → time map must not move with that."""
    clock = pi_clock()
    # a pointer as fine as a frame: this test is about the Python callback's delay alone
    # (tests/test_dac_clock.py: a pointer that steps)
    pa = FakePortAudio([USB], default=USB, clock=clock.now, manual=True, pa_origin_s=86_399.123,
                       pointer_step_s=1 / 22050)
    pa.advance = lambda us: clock.advance_to(clock.now() + us)
    sink = SoundDeviceSink("USB", 22050, backend=pa, clock=clock.now, latency=0.05)
    sink.start()
    try:
        stream = pa.streams[-1]
        errors = []
        for delay_us in [0, 3000, 250, 7000, 1200, 0, 4000]:
            clock.advance_to(clock.now() + stream.blocksize * 1_000_000 // 22050)
            pa.entry_delay_us = delay_us
            frame0 = sink.mixer.next_frame
            stream.fire()
            true_dac_us = (stream.played[-1][1] - pa.pa_origin_s) * 1e6
            errors.append(abs(sink.frame_to_us(frame0) - true_dac_us))
            sink.dac.reset()  # judge each block's own reading, not the window's best
        # under a frame (45 µs: what a frame-exact pointer still rounds), whatever the delay
        assert max(errors) < 1e6 / 22050, errors
    finally:
        sink.close()


def test_speaker_delay_is_added_to_every_cue() -> None:
    clock = pi_clock()
    # two sinks at once: through ALSA's default (dmix), as PortAudio's default device is
    pa = FakePortAudio([USB, "default"], default="default", clock=clock.now, manual=True)
    plain = SoundDeviceSink(None, 22050, backend=pa, clock=clock.now)
    tv = SoundDeviceSink(None, 22050, backend=pa, clock=clock.now, output_delay_ms=85)
    plain.start()
    tv.start()
    try:
        assert tv.frame_to_us(22050) - plain.frame_to_us(22050) == 85_000
        assert "85 ms speaker delay" in tv.describe()
    finally:
        plain.close()
        tv.close()


# -- watchdog, rescan, underruns -----------------------------------------------------------------


def test_an_unplugged_speaker_is_noticed_and_reopened_when_it_is_back() -> None:
    pa = FakePortAudio(PI5, default="default", clock=lambda: time.monotonic_ns() // 1000)
    said: list[str | None] = []
    sink = SoundDeviceSink("usb", 22050, backend=pa, on_health=said.append, stall_s=0.3,
                           rescan_s=0.2)
    sink.start()
    try:
        assert sink.device is not None and sink.device.name == USB
        sink.mixer.schedule(sink.mixer.render(0), sink.mixer.next_frame + 22050, "late cue")
        pa.unplug(USB)
        wait_for(lambda: said and said[-1] is not None)
        assert "'USB Audio Device: - (hw:2,0)' stopped playing (unplugged?)" in said[0]  # type: ignore[operator]
        assert sink.mixer.busy_until() == sink.mixer.next_frame  # nothing promised stays queued
        assert not sink.health()["playing"]
        time.sleep(0.5)
        assert sink.health()["problem"] is not None  # still gone: still looking
        pa.plug(USB)
        wait_for(lambda: said[-1] is None)
        assert pa.rescans >= 1 and sink.reopens >= 1
        assert sink.health()["playing"] and len(pa.streams) >= 2
        before = sink.callbacks
        wait_for(lambda: sink.callbacks > before + 3)  # playing again
    finally:
        sink.close()


def test_a_usb_speaker_that_appears_after_start_is_waited_for() -> None:
    pa = FakePortAudio(PI5[:2], default=PI5[0], clock=lambda: time.monotonic_ns() // 1000)
    said: list[str | None] = []
    sink = SoundDeviceSink("USB", 22050, backend=pa, on_health=said.append, rescan_s=0.1)
    sink.start()  # does not fall back to HDMI, does not raise
    try:
        assert said and said[0] is not None and "sound device 'USB' not found" in said[0]
        assert "vc4-hdmi-0" in said[0]  # the message lists what PortAudio does see
        pa.plug(USB)  # plugged in, but PortAudio's list is only refreshed by a rescan
        wait_for(lambda: said[-1] is None)
        assert sink.device is not None and sink.device.name == USB
    finally:
        sink.close()


def test_a_card_that_only_plays_48000_hz_is_played_at_48000_hz() -> None:
    pa = FakePortAudio([USB], default=USB, clock=lambda: time.monotonic_ns() // 1000, block_ms=5)
    pa.rates = {48000}
    sink = SoundDeviceSink("USB", 22050, backend=pa)
    sink.start()
    try:
        assert sink.problem is None and sink.samplerate == 48000
        assert sink.mixer.samplerate == 48000 and pa.streams[-1].samplerate == 48000
    finally:
        sink.close()


def test_underruns_are_counted() -> None:
    pa = FakePortAudio([USB], default=USB, clock=lambda: time.monotonic_ns() // 1000, block_ms=5)
    pa.underflow_blocks = {3, 4, 9}
    sink = SoundDeviceSink(None, 22050, backend=pa)
    sink.start()
    try:
        wait_for(lambda: sink.callbacks >= 12)
        # those three, and any real xrun of the fake card (its thread held up past the 50 ms
        # queued, as a loaded machine may): each flagged on the callback after it
        real = sum(stream.xruns for stream in pa.streams)
        assert sink.underruns == 3 + real and sink.health()["underruns"] == 3 + real
    finally:
        sink.close()


# -- the table pauses and the scoreboard says why -----------------------------------------------


def test_a_silent_speaker_pauses_the_table_and_the_scoreboard_says_why(
        tmp_path: Path, speech_cache: Path, browser: Any) -> None:
    from referee.cli.table import Table, use_mock_pins
    from referee.scoreboard.app import serve_in_thread
    from referee.voice.speech import SpeechAnnouncer
    from referee.voice.tts import Renderer, SpeechOptions

    use_mock_pins()
    pa = FakePortAudio(PI5, default="default", clock=lambda: time.monotonic_ns() // 1000)
    # a second without a callback is a stall here (0.5 s on a table). With 0.3 s, a five-worker
    # run once opened the page on a warning before anything was unplugged; a stall is the only
    # warning that comes with time, and the fake's callbacks are a Python thread that shares the
    # GIL with the browser driver, the server and the engine (the banner's text is now printed)
    # rescans 2 s apart: the first rescan after the stall says "not found" instead (a loaded
    # run read the warning after it)
    sink = SoundDeviceSink("USB", 22050, backend=pa, stall_s=1.0, rescan_s=2.0)
    sink.start()
    voice = SpeechAnnouncer(Renderer(SpeechOptions(cache_dir=speech_cache)), sink)
    table = Table(default_config(["Blue", "Red", "Green"]), db=tmp_path / "t.db", mock=True,
                  announcer=voice, auto=False)
    server = serve_in_thread(table, "127.0.0.1", 0)

    def state() -> dict:
        with urllib.request.urlopen(server.url + "api/state", timeout=5) as resp:
            return dict(json.load(resp))

    try:
        table.start("spank-the-pig", {"doubles": "off"})
        assert state()["health"]["warnings"] == [] and state()["phase"] != "paused"
        assert state()["health"]["audio"]["device"] == USB
        context = browser.new_context()  # on the shared headless Chromium (tests/conftest.py)
        try:
            page = context.new_page()
            page.goto(server.url)
            page.wait_for_selector("#seats li")
            assert page.locator("#alert").is_hidden(), page.locator("#alert").inner_text()
            pa.unplug(USB)
            wait_for(lambda: state()["phase"] == "paused")
            warnings = state()["health"]["warnings"]
            assert len(warnings) == 1 and "Paused: sound device" in warnings[0]
            assert "stopped playing (unplugged?)" in warnings[0]
            banner = page.locator("#alert")
            banner.wait_for(state="visible", timeout=10_000)
            assert "stopped playing (unplugged?)" in banner.inner_text()
            pa.plug(USB)
            wait_for(lambda: state()["phase"] != "paused")
            assert state()["health"]["warnings"] == []
            banner.wait_for(state="hidden", timeout=10_000)
        finally:
            context.close()
    finally:
        server.close()
        table.close()


# -- referee calibrate -----------------------------------------------------------------------------


def calibrate_args(config: Path | None, **kw: object) -> object:
    import argparse

    return argparse.Namespace(config=str(config) if config else None, seats=None, device=None,
                              mic=None, clicks=8, dry_run=False, **kw)


@pytest.mark.parametrize("delay_ms", [0.0, 73.4, 141.0])
def test_calibrate_recovers_a_known_speaker_delay_within_1_ms(tmp_path: Path, delay_ms: float) -> None:
    import io

    from referee.cli.calibrate import run_calibrate
    from tests.fakeaudio import Room

    pa = FakePortAudio(PI5, default="default", clock=lambda: time.monotonic_ns() // 1000,
                       block_ms=10)
    pa.inputs = ["USB PnP Sound Device: Audio (hw:3,0)"]
    pa.room = Room(48000, delay_ms / 1000, origin_s=pa.pa_time() - 1.0)
    config = tmp_path / "config.toml"
    config.write_text(Path("hardware/config.example.toml").read_text()
                      .replace("[speech]", '[speech]\ndevice = "USB Audio"', 1))
    out = io.StringIO()
    assert run_calibrate(calibrate_args(config), backend=pa, out=out) == 0  # type: ignore[arg-type]
    measured = load_config(config).speech["output_delay_ms"]
    assert abs(measured - delay_ms) <= 1.0, out.getvalue()
    assert load_config(config).speech["device"] == "USB Audio"  # the rest of the file kept
    assert "speaker delay" in out.getvalue() and "of 8 clicks" in out.getvalue()
    assert "# table PIN" in config.read_text() or "pin =" in config.read_text()


def test_calibrate_without_a_microphone_says_what_to_do(tmp_path: Path) -> None:
    import io

    from referee.cli.calibrate import run_calibrate

    pa = FakePortAudio(PI5, default="default", clock=lambda: time.monotonic_ns() // 1000)
    out = io.StringIO()
    assert run_calibrate(calibrate_args(None), backend=pa, out=out) == 1  # type: ignore[arg-type]
    text = out.getvalue()
    assert text.startswith("no microphone found") and "hold it against the speaker" in text
    assert "output_delay_ms" in text and "\n" not in text.strip()


# -- ALSA's routing: a card named in /etc/asound.conf plays through `default` -------------------

# /proc/asound/cards on a Pi 5 with a USB speaker (card ids in brackets, as ALSA names them)
PI5_CARDS = """ 0 [vc4hdmi0       ]: vc4-hdmi - vc4-hdmi-0
                      vc4-hdmi-0
 1 [vc4hdmi1       ]: vc4-hdmi - vc4-hdmi-1
                      vc4-hdmi-1
 2 [Device         ]: USB-Audio - USB Audio Device
                      GeneralPlus USB Audio Device at usb-xhci-hcd.0-1, full speed
"""
HDMI0 = PI5[0]


def test_the_card_asound_conf_names_is_found_by_its_id(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from referee.voice import device

    cards, conf = tmp_path / "cards", tmp_path / "asound.conf"
    cards.write_text(PI5_CARDS)
    monkeypatch.setattr(device, "ASOUND_CARDS", cards)
    monkeypatch.setattr(device, "ASOUND_CONFS", (conf, tmp_path / "none"))
    assert device.alsa_default_card() is None  # no config: ALSA's own default
    # as hardware/install.sh writes it
    conf.write_text('# table-referee\ndefaults.pcm.card "Device"\ndefaults.ctl.card "Device"\n')
    assert device.alsa_default_card() == 2
    conf.write_text("defaults.pcm.card 1\n")
    assert device.alsa_default_card() == 1


@pytest.mark.parametrize("wanted, default_card, opened", [
    ("hdmi", 0, "default"),  # install.sh --sound-card hdmi: through default's iec958 plug
    ("USB", 2, "default"),  # through dmix: doctor, calibrate and speech say can play too
    ("USB", None, USB),  # asound.conf names no card: the raw device, as asked
])
def test_a_card_named_by_name_plays_through_alsas_default_when_it_is_the_default_card(
        wanted: str, default_card: int | None, opened: str) -> None:
    pa = FakePortAudio(PI5, default="default", clock=lambda: time.monotonic_ns() // 1000)
    sink = SoundDeviceSink(wanted, 48000, backend=pa, default_card=lambda: default_card)
    sink.start()
    try:
        assert sink.problem is None and sink.device is not None
        assert sink.device.name == opened
        second = SoundDeviceSink(wanted, 48000, backend=pa, default_card=lambda: default_card)
        second.start()  # referee doctor while the service plays
        try:
            assert (second.problem is None) is (opened == "default"), second.problem
        finally:
            second.close()
    finally:
        sink.close()


def test_raw_hdmi_is_refused_with_the_fix_not_opened() -> None:
    pa = FakePortAudio(PI5, default="default", clock=lambda: time.monotonic_ns() // 1000)
    sink = SoundDeviceSink("hdmi", 48000, backend=pa, default_card=lambda: 2, rescan_s=60)
    sink.start()
    try:
        assert sink.device is None and sink.problem is not None
        assert sink.problem.startswith(f"sound device {HDMI0!r} is HDMI's raw device, which "
                                       "takes only IEC958 frames: make HDMI ALSA's default")
        assert "--sound-card hdmi" in sink.problem
        assert not pa.streams  # never tried (PortAudio: Sample format not supported)
    finally:
        sink.close()


def test_doctor_marks_a_raw_hdmi_device_unusable_and_says_the_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse
    import io

    from referee.cli import doctor
    from referee.voice import device

    monkeypatch.setattr(doctor, "sound_devices", lambda: PI5)
    monkeypatch.setattr(device, "alsa_default_card", lambda: None)
    monkeypatch.setattr(doctor.Doctor, "_describe_announcer", lambda self: (
        pytest.fail("the voice is not started on a device known unusable")))
    config = tmp_path / "config.toml"
    config.write_text(Path("hardware/config.example.toml").read_text()
                      .replace("[speech]", '[speech]\ndevice = "hdmi"', 1))
    d = doctor.Doctor(argparse.Namespace(config=str(config), mock=True, db=None), io.StringIO())
    list(d.check_config())  # the doctor reads the config first
    (line,) = [str(x) for x in d.check_audio()]
    assert line.startswith(f"FIX audio output: sound device {HDMI0!r} is HDMI's raw device")
    assert line.endswith('or name another card in [speech] device (device = "hdmi" now)')
    monkeypatch.setattr(device, "alsa_default_card", lambda: 0)  # asound.conf names HDMI
    assert d._raw_hdmi(PI5) is None


# -- a missing speaker: PortAudio re-initialised when a card comes, not every 2 s ---------------


@pytest.mark.parametrize("card_list", [True, False])
def test_a_missing_speaker_is_looked_for_when_a_card_comes_and_ever_less_often_meanwhile(
        card_list: bool) -> None:
    """Each look re-initialises PortAudio, which probes every ALSA PCM: a dozen lines in the
    journal each time. While nothing is plugged in, the looks come 2, 4, 8 ... (here 0.1, 0.2,
    0.4 ...) s apart, capped; a card in /proc/asound/cards is looked at at once; the problem is
    said once."""
    pa = FakePortAudio(PI5[:2], default=PI5[0], clock=lambda: time.monotonic_ns() // 1000)
    pa.no_card_list = not card_list
    said: list[str | None] = []
    sink = SoundDeviceSink("USB", 22050, backend=pa, on_health=said.append, rescan_s=0.1,
                           rescan_max_s=0.8)
    sink.start()
    try:
        time.sleep(3.0)  # every 0.1 s: 30 re-initialisations
        looks = pa.rescans
        assert 3 <= looks <= 8, looks  # 0, 0.1, 0.3, 0.7, 1.5, 2.3 (capped at 0.8 s apart)
        assert said == [said[0]] and said[0] is not None  # said once
        assert said[0].endswith("looking again when a sound card is plugged in")
        time.sleep(0.3)  # a look at 0.8 s apart is not due for a while
        pa.plug(USB)
        plugged = time.monotonic()
        wait_for(lambda: said[-1] is None)
        waited = time.monotonic() - plugged
        if card_list:
            assert waited < 0.4, waited  # at once (the watchdog wakes every 50 ms)
        assert sink.device is not None and sink.device.name == USB
    finally:
        sink.close()
