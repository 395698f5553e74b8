"""`referee doctor`: is this machine ready to referee? One line per check, never a traceback.

Each line is ``ok  <what>: <detail>`` or ``FIX <what>: <the finding and one clear fix>``, in this
order: the config, the pin factory in use (and whether it times edges), GPIO access, the Pi
model, power (under-voltage and throttling from ``vcgencmd get_throttled``), the fitted HAT (from
the device tree: a configured pin it uses is refused), every configured pin (with its level: a
button reading "pressed" at rest is stuck or wired wrong; a busy pin is named with its real
owner), audio output (the announcer's own description, underruns, and an HDMI default when a
better card is there), espeak-ng, pyttsx3 (started in a child process with a timeout), the
database (opened, never created: WAL mode, writable) and the scoreboard address. Every check is
wrapped: one that fails unexpectedly is one FIX line naming the exception. Exit status 0 when
every line is ok, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import glob
import grp
import importlib.metadata
import importlib.util
import io
import os
import platform
import pwd
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from referee.capture.header import box_error, where
from referee.config import ConfigError, TableConfig, default_config, load_config

MODEL_FILE = Path("/proc/device-tree/model")
HAT_DIR = Path("/proc/device-tree/hat")  # the HAT's EEPROM, as the firmware read it at boot
VCGENCMD = "vcgencmd"
VCIO = Path("/dev/vcio")  # the firmware's mailbox vcgencmd asks through: root:video 0660
# the labels a referee's lines carry in the kernel: lg (lgpio's library) names every line it
# claims "lg" (lgGpiochipOpen: userLabel "lg"); older or other factories
REFEREE_CONSUMERS = ("lg", "lgpio", "referee", "gpiozero")
GPIOCHIP_GLOB = "/dev/gpiochip*"
ASOUND_CARDS = Path("/proc/asound/cards")
PYTTSX3_TIMEOUT_S = 15.0
ANNOUNCER_TIMEOUT_S = 30.0
ESPEAK_TIMEOUT_S = 5.0
WILDCARD_HOSTS = ("0.0.0.0", "::", "")

_PYTTSX3_PROBE = (
    "import pyttsx3\n"
    "engine = pyttsx3.init()\n"
    "print(len(engine.getProperty('voices') or []))\n"
    "engine.stop()\n"
)


@dataclass(frozen=True)
class Line:
    ok: bool
    what: str
    text: str

    def __str__(self) -> str:
        return f"{'ok ' if self.ok else 'FIX'} {self.what}: {self.text}"


def ok(what: str, text: str) -> Line:
    return Line(True, what, text)


def fix(what: str, text: str) -> Line:
    return Line(False, what, text)


# ------------------------------------------------------------------------------------------------
# Machine facts


def pi_model(path: Path | None = None) -> str | None:
    """The Pi's model string from the device tree, or None on a machine that is not a Pi."""
    path = MODEL_FILE if path is None else path
    try:
        model = path.read_bytes().decode("utf-8", "replace").strip("\x00 \n")
    except OSError:
        return None
    return model if "raspberry pi" in model.lower() else None


def is_pi5(model: str | None) -> bool:
    return model is not None and ("Pi 5" in model or "Compute Module 5" in model)


def has_jack(model: str | None) -> bool:
    """Pi 5 and Zero 2 W have no 3.5 mm audio jack (nor does any Zero, nor a Compute Module)."""
    if model is None:
        return False
    return not (is_pi5(model) or "Zero" in model or "Compute Module" in model)


def fitted_hat(hat_dir: Path | None = None) -> str | None:
    """The fitted HAT's product string (vendor in brackets), or None without a HAT."""
    hat_dir = HAT_DIR if hat_dir is None else hat_dir

    def read(name: str) -> str:
        try:
            return (hat_dir / name).read_bytes().decode("utf-8", "replace").strip("\x00 \n")
        except OSError:
            return ""

    product = read("product")
    if not product:
        return None
    vendor = read("vendor")
    return f"{product} ({vendor})" if vendor else product


THROTTLE_BITS = {
    0: "under-voltage now", 1: "CPU frequency capped now", 2: "throttled now",
    3: "at the soft temperature limit now", 16: "under-voltage since boot",
    17: "frequency capped since boot", 18: "throttled since boot",
    19: "soft temperature limit reached since boot",
}


def throttled() -> tuple[int, list[str]] | str | None:
    """`vcgencmd get_throttled` as (bits, what they mean); None where vcgencmd is missing; what
    it said where it ran and gave no answer (it cannot open /dev/vcio without the video group)."""
    exe = shutil.which(VCGENCMD)
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "get_throttled"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    try:
        bits = int(done.stdout.strip().partition("=")[2], 16)
    except ValueError:
        said = (done.stdout + done.stderr).strip().splitlines()
        return said[0] if said else f"exit status {done.returncode}"
    return bits, [text for bit, text in THROTTLE_BITS.items() if bits >> bit & 1]


def sound_devices() -> list[str]:
    """Output devices PortAudio sees ([] without sounddevice/PortAudio or without a card)."""
    try:
        from referee.voice.audio import output_devices

        return [str(d) for d in output_devices()]
    except Exception:  # noqa: BLE001 - no numpy / sounddevice: as good as no device
        return []


def alsa_cards() -> list[str]:
    """The sound cards the kernel knows (from /proc/asound/cards), [] when none or not Linux."""
    try:
        text = ASOUND_CARDS.read_text()
    except OSError:
        return []
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()[:1].isdigit()]


ASOUND_CONFS = (Path("/etc/asound.conf"), Path.home() / ".asoundrc")


def parse_cards(lines: list[str]) -> list[tuple[int, str, str]]:
    """(index, id, name) from /proc/asound/cards lines such as
    "2 [Device ]: USB-Audio - USB Audio Device"."""
    import re

    cards = []
    for line in lines:
        found = re.match(r"\s*(\d+)\s*\[\s*([^\]]*?)\s*\]:\s*(.*)$", line)
        if found:
            rest = found.group(3)
            name = rest.partition(" - ")[2].strip() if " - " in rest else rest.strip()
            cards.append((int(found.group(1)), found.group(2), name))
    return cards


def alsa_default_card(cards: list[tuple[int, str, str]]) -> tuple[int, str, str] | None:
    """The card ALSA plays on by default: `defaults.pcm.card` from /etc/asound.conf (or this
    user's ~/.asoundrc), else card 0."""
    from referee.voice.device import asound_default_name

    wanted = asound_default_name(ASOUND_CONFS)
    for index, ident, name in cards:
        if wanted is None and index == 0 or wanted in (str(index), ident):
            return index, ident, name
    return None


# ------------------------------------------------------------------------------------------------
# The checks


class Doctor:
    def __init__(self, args: argparse.Namespace, out: TextIO) -> None:
        self.args = args
        self.out = out
        self.mock = bool(getattr(args, "mock", False))
        self.config: TableConfig | None = None
        self.factory: Any = None
        self.model: str | None = None
        self.lines: list[Line] = []
        self.audio_health: dict[str, Any] = {}

    def run(self) -> int:
        checks: list[tuple[str, Callable[[], Iterable[Line]]]] = [
            ("config", self.check_config),
            ("pin factory", self.check_pin_factory),
            ("GPIO access", self.check_gpio_access),
            ("Pi model", self.check_pi_model),
            ("power", self.check_power),
            ("HAT", self.check_hat),
            ("pins", self.check_pins),
            ("audio output", self.check_audio),
            ("espeak-ng", self.check_espeak),
            ("pyttsx3", self.check_pyttsx3),
            ("voice", self.check_voice),
            ("database", self.check_database),
            ("scoreboard", self.check_scoreboard),
        ]
        for name, check in checks:
            try:
                lines = list(check())
            except Exception as exc:  # noqa: BLE001 - a broken check is a line, not a traceback
                lines = [fix(name, f"the check itself failed ({type(exc).__name__}: {exc}); "
                              "please report this with the output of referee doctor")]
            for line in lines:
                self.lines.append(line)
                print(line, file=self.out, flush=True)
        bad = sum(not line.ok for line in self.lines)
        if bad:
            print(f"{bad} of {len(self.lines)} checks need a fix (the FIX lines above).",
                  file=self.out, flush=True)
            return 1
        print(f"All {len(self.lines)} checks ok.", file=self.out, flush=True)
        return 0

    # -- config ------------------------------------------------------------------------------

    def check_config(self) -> Iterable[Line]:
        path = getattr(self.args, "config", None)
        try:
            self.config = load_config(path) if path else default_config()
        except ConfigError as exc:
            yield fix("config", f"{exc} (pins, audio and scoreboard are checked with the default "
                                "wiring meanwhile)")
            self.config = None
            return
        c = self.config
        parts = [f"{len(c.seats)} seats ({', '.join(s.name for s in c.seats)})"]
        if c.judge is not None:
            parts.append("judge keypad")
        if c.leds is not None:
            parts.append("74HC595 LED chain")
        source = path if path else "default wiring (wiring.md)"
        yield ok("config", f"{source}: {', '.join(parts)}; game {c.game}")

    def _config(self) -> TableConfig:
        return self.config if self.config is not None else default_config()

    # -- GPIO --------------------------------------------------------------------------------

    def check_pin_factory(self) -> Iterable[Line]:
        from gpiozero import Device

        if self.mock:
            from referee.cli.table import use_mock_pins

            use_mock_pins()
        env = os.environ.get("GPIOZERO_PIN_FACTORY")
        how = "--mock" if self.mock else (f"GPIOZERO_PIN_FACTORY={env}" if env else
                                          "gpiozero's default choice")
        self.model = pi_model()
        if Device.pin_factory is None:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    Device.ensure_pin_factory()
                except Exception as exc:  # noqa: BLE001
                    tried = "; ".join(str(w.message).replace("Falling back from ", "")
                                      for w in caught) or str(exc)
                    yield fix("pin factory", self._factory_fix(env, exc, tried))
                    return
                fell_back = [str(w.message) for w in caught if "lgpio" in str(w.message)]
        else:
            fell_back = []
        self.factory = Device.pin_factory
        name = type(self.factory).__name__
        from referee.capture.gpio import edge_timing

        timing = edge_timing(self.factory)
        if not timing.timed:
            why = f"; lgpio did not load: {lgpio_cause(fell_back[0])}" if fell_back else ""
            if self._config().buttons.untimed_edges:
                yield ok("pin factory", f"{name} ({how}): {timing.note}; allowed by "
                                        f"untimed_edges in [buttons]{why}")
            else:
                yield fix("pin factory", f"{name} ({how}): {timing.note}{why}: use lgpio "
                                         "(sudo apt install python3-lgpio; the service sets "
                                         "GPIOZERO_PIN_FACTORY=lgpio), or allow it with "
                                         "untimed_edges = true in [buttons]")
            return
        if timing.software and not self.mock and env != "mock":
            how = "already set by the caller"
        yield ok("pin factory", f"{name} ({how}): {timing.note}")

    def _factory_fix(self, env: str | None, exc: BaseException, tried: str) -> str:
        if "lgpio" in tried and ".lgd-nfy" in tried:
            return f"lgpio does not load: {lgpio_cause(tried)}"
        if env:
            return (f"GPIOZERO_PIN_FACTORY={env} does not load ({exc}): use lgpio on a Pi, or "
                    "mock without hardware")
        if self.model is None:
            return (f"none loads ({tried}): this is not a Raspberry Pi; use --mock (or "
                    "GPIOZERO_PIN_FACTORY=mock) to run without hardware")
        return (f"none loads ({tried}): sudo apt install python3-lgpio, and make the venv with "
                "--system-site-packages (sudo hardware/install.sh does both)")

    def check_gpio_access(self) -> Iterable[Line]:
        chips = sorted(glob.glob(GPIOCHIP_GLOB))
        if not chips:
            from referee.capture.gpio import edge_timing

            if self.mock or self.model is None and edge_timing(self.factory).software:
                yield ok("GPIO access", "not a Raspberry Pi (no /dev/gpiochip*): mocked pins "
                                        "in use, no hardware needed")
            elif self.model is None:
                yield fix("GPIO access", "not a Raspberry Pi (no /dev/gpiochip*): run this on "
                                         "the Pi, or use --mock to try it without hardware")
            else:
                yield fix("GPIO access", "no /dev/gpiochip* on this Pi: update Raspberry Pi OS "
                                         "(sudo apt full-upgrade) and reboot")
            return
        in_group = _in_group("gpio")
        denied = [c for c in chips if not os.access(c, os.R_OK | os.W_OK)]
        if denied:
            if in_group is False:
                yield fix("GPIO access", f"{', '.join(denied)} not readable by this user: "
                                         "sudo usermod -aG gpio $USER, then log out and in")
            else:
                yield fix("GPIO access", f"{', '.join(denied)} not readable although you are "
                                         "in the gpio group: log out and in (or reboot) so the "
                                         "group applies")
            return
        group = "; user in the gpio group" if in_group else ""
        yield ok("GPIO access", f"{', '.join(chips)} readable and writable{group}")

    def check_pi_model(self) -> Iterable[Line]:
        model = self.model
        if model is None:
            yield ok("Pi model", f"not a Raspberry Pi ({platform.system()} "
                                 f"{platform.machine()})")
            return
        if is_pi5(model):
            factory = type(self.factory).__name__
            if factory == "RPiGPIOFactory":
                yield fix("Pi model", f"{model}: RPi.GPIO does not work on a Pi 5: sudo apt "
                                      "install python3-lgpio and set GPIOZERO_PIN_FACTORY=lgpio")
            elif importlib.util.find_spec("lgpio") is None:
                yield fix("Pi model", f"{model} needs lgpio: sudo apt install python3-lgpio "
                                      "(venv with --system-site-packages)")
            else:
                yield ok("Pi model", f"{model} (lgpio found, as a Pi 5 requires)")
            return
        yield ok("Pi model", model)

    def check_power(self) -> Iterable[Line]:
        if self.model is None:
            yield ok("power", "not a Raspberry Pi: not checked")
            return
        found = throttled()
        if found is None:
            yield ok("power", "not checked (no vcgencmd: sudo apt install libraspberrypi-bin)")
            return
        if isinstance(found, str):
            if VCIO.exists() and not os.access(VCIO, os.R_OK | os.W_OK):
                yield ok("power", f"not checked: this user may not open {VCIO} (the video "
                                  "group's), so vcgencmd cannot ask the firmware: run sudo "
                                  "referee doctor, or add the user to the video group (sudo "
                                  "usermod -aG video USER, then log in again)")
            else:
                yield ok("power", f"not checked: vcgencmd get_throttled said {found!r}")
            return
        bits, what = found
        if bits & 0x50005:  # under-voltage or throttling, now or since boot
            yield fix("power", f"{', '.join(what)} (get_throttled=0x{bits:x}): use the official "
                               "power supply (5.1 V 3 A; 5 V 5 A for a Pi 5) and a short cable; "
                               "a USB speaker and the button LEDs draw from it too")
        elif bits:
            yield fix("power", f"{', '.join(what)} (get_throttled=0x{bits:x}): the Pi is too "
                               "hot; give it air or a heatsink")
        else:
            yield ok("power", "no under-voltage or throttling since boot")

    def check_hat(self) -> Iterable[Line]:
        from referee.capture.header import HAT_SAFE_PINS, hat_pins
        from referee.config import _pin_uses

        hat = fitted_hat()
        if hat is None:
            if self.model is not None:
                yield ok("HAT", "no HAT fitted (nothing in /proc/device-tree/hat)")
            return
        uses = hat_pins(hat)
        config = self._config()
        taken = {pin for pin, _ in _pin_uses(config)}
        clashes = [(pin, user) for pin, user in _pin_uses(config) if pin in uses]
        if not clashes:
            yield ok("HAT", f"{hat}: none of the configured pins is one it uses")
            return
        spare = [p for p in HAT_SAFE_PINS if p not in taken and p not in uses]
        for pin, user in clashes:
            offer = f"e.g. BCM {spare.pop(0)} ({where_free(spare)})" if spare else \
                "see the HAT-safe pin map in wiring.md"
            yield fix("HAT", f"{where(pin)} is used by {uses[pin]} on the fitted HAT {hat}, "
                             f"but the config gives it to {user}: move {user} to a HAT-safe pin, "
                             f"{offer}")

    def _pin_owner(self, bcm: int) -> str:
        """Who really holds a busy pin: the fitted HAT's use of it, the kernel's consumer."""
        from referee.capture.header import hat_pins
        from referee.capture.lineinfo import line_info

        parts = []
        hat = fitted_hat()
        if hat is not None and bcm in hat_pins(hat):
            parts.append(f"{hat_pins(hat)[bcm]} on the fitted HAT {hat}")
        info = line_info(bcm)
        if info is not None and info.consumer:
            parts.append(f"the kernel says {info.consumer!r} holds it")
            if info.consumer in REFEREE_CONSUMERS:
                parts.append("another referee? sudo systemctl stop table-referee")
        return "; ".join(parts)

    def check_pins(self) -> Iterable[Line]:
        if self.factory is None:
            yield fix("pins", "not checked: fix the pin factory first")
            return
        from referee.capture.gpio import ButtonBox

        config = self._config()
        try:
            box = ButtonBox(config, lambda event: None, factory=self.factory, untimed_ok=True,
                            confirmer=False)
        except Exception as exc:  # noqa: BLE001
            bcm = getattr(exc, "bcm", None)
            owner = self._pin_owner(bcm) if isinstance(bcm, int) else ""
            if owner:
                yield fix("pins", f"{where(bcm)} for {getattr(exc, 'role', '?')} is busy: "  # type: ignore[arg-type]
                                  f"{owner}; give it another pin (wiring.md, HAT-safe pin map)")
            else:
                yield fix("pins", box_error(exc))
            return
        try:
            rows = box.pins()
        finally:
            box.close()
        if not rows:
            yield fix("pins", "no pins configured: add [[seats]] with slap pins to the config")
        for role, bcm, state in rows:
            yield _pin_line(role, bcm, state)

    # -- sound -------------------------------------------------------------------------------

    def check_audio(self) -> Iterable[Line]:
        devices = sound_devices()
        unusable = self._raw_hdmi(devices)
        if unusable:
            yield fix("audio output", unusable)
            return
        described, trouble = self._describe_announcer()
        if described is None:
            yield fix("audio output", f"the voice does not start ({trouble}): phrases will be "
                                      "printed; see the espeak-ng and pyttsx3 lines below")
            return
        if trouble and "sound device" in trouble and devices:
            yield fix("audio output", f"{described} — {trouble}: stop whatever holds the sound "
                                      "device (the referee service? sudo systemctl stop table-referee) "
                                      "and run referee doctor again")
            return
        if trouble:
            yield fix("audio output", f"{described} — {trouble}: phrases will be printed; see "
                                      "the espeak-ng and pyttsx3 lines below")
            return
        if not devices and alsa_cards():
            yield fix("audio output", f"the sound card ({alsa_cards()[0]}) is not usable from "
                                      f"Python ({described}): sudo apt install libportaudio2, "
                                      "then .venv/bin/pip install sounddevice")
            return
        if not devices:
            yield fix("audio output", f"no sound card ({described}): phrases will be printed; "
                                      f"{self._speaker_advice()}, then run referee doctor again")
            return
        if self.audio_health.get("problem"):
            yield fix("audio output", f"{self.audio_health['problem']}: {self._speaker_advice()}")
            return
        hdmi = self._hdmi_default()
        if hdmi:
            yield fix("audio output", hdmi)
            return
        underruns = int(self.audio_health.get("underruns", 0) or 0)
        if underruns:
            yield fix("audio output", f"{described}; {underruns} underruns while checking: stop "
                                      "other programs using the CPU or the sound card")
            return
        counted = "underruns" in self.audio_health
        yield ok("audio output", f"{described}; no underruns" if counted else described)

    def _raw_hdmi(self, devices: list[str]) -> str | None:
        """FIX text when [speech] device names a raw HDMI device nothing routes through ALSA's
        plugins (it takes only IEC958 frames: PortAudio cannot open it)."""
        wanted = self._config().speech.get("device")
        if wanted is None or not devices:
            return None
        from referee.voice.device import OutputDevice, alsa_default_card, choose_device, route

        listed = [OutputDevice(i, name, 48000.0) for i, name in enumerate(devices)]
        device = choose_device(listed, wanted)
        if device is None:
            return None
        routed, why = route(device, listed, alsa_default_card())
        if routed is not None:
            return None
        return f'{why}; or name another card in [speech] device (device = "{wanted}" now)'

    def _speaker_advice(self) -> str:
        if has_jack(self.model) or self.model is None:
            return ("plug a speaker into the 3.5 mm jack or a USB sound card (or fit "
                    "the audio HAT)")
        return (f"this {self.model} has no 3.5 mm jack: plug in a USB speaker or USB sound "
                "card, use HDMI to a TV, or fit an I2S audio HAT")

    def _hdmi_default(self) -> str | None:
        """FIX text when ALSA's default card is HDMI, another card is there, and [speech] names
        no device (a Pi 5 with a USB speaker: the referee would talk to the TV, or nobody)."""
        if self._config().speech.get("device") is not None:
            return None
        cards = parse_cards(alsa_cards())
        default = alsa_default_card(cards)
        if default is None or "hdmi" not in default[2].casefold():
            return None
        others = [c for c in cards if "hdmi" not in c[2].casefold()]
        if not others:
            return None
        name = others[0][2]
        return (f"ALSA's default sound card is HDMI ({default[2]}) although {name!r} is there: "
                f'set device = "{name}" under [speech] in the config (sudo hardware/install.sh '
                "offers this); raspi-config's choice only reaches the login user, not the "
                "service")

    def _describe_announcer(self) -> tuple[str | None, str]:
        """(the announcer's describe(), trouble it reported) — built with a timeout."""
        from referee.cli.table import make_announcer

        result: dict[str, Any] = {}
        config = self._config()

        def build() -> None:
            try:
                announcer = make_announcer(config, no_speech=False, out=io.StringIO())
                try:
                    result["describe"] = announcer.describe()
                    health = getattr(announcer, "health", None)
                    result["health"] = health() if health is not None else {}
                    result["printing"] = type(announcer).__name__ == "PrintAnnouncer"
                finally:
                    announcer.close()
            except Exception as exc:  # noqa: BLE001
                result["error"] = f"{type(exc).__name__}: {exc}"

        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            worker = threading.Thread(target=build, name="doctor-speech", daemon=True)
            worker.start()
            worker.join(ANNOUNCER_TIMEOUT_S)
        from referee.voice.tts import FALLBACK_SAID  # a Piper notice: the voice line says it

        said = " ".join(" ".join(line.split()) for line in errors.getvalue().splitlines()
                        if not line.rstrip().endswith(FALLBACK_SAID))
        if worker.is_alive():
            return None, f"it did not start within {ANNOUNCER_TIMEOUT_S:g} s"
        if "error" in result:
            return None, str(result["error"])
        self.audio_health = dict(result.get("health") or {})
        described = str(result.get("describe", ""))
        if result.get("printing"):
            return described, said or "speech could not render a phrase"
        return described, said

    def check_espeak(self) -> Iterable[Line]:
        exe = shutil.which("espeak-ng")
        if exe is None:
            yield fix("espeak-ng", "not installed: sudo apt install espeak-ng")
            return
        try:
            done = subprocess.run([exe, "--version"], capture_output=True, text=True,
                                  timeout=ESPEAK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            yield fix("espeak-ng", f"{exe} --version hangs: reinstall it (sudo apt install "
                                   "--reinstall espeak-ng)")
            return
        first = (done.stdout.strip().splitlines() or [""])[0]
        if done.returncode != 0 or not first:
            err = " ".join(done.stderr.split())[:160] or f"exit status {done.returncode}"
            yield fix("espeak-ng", f"{exe} --version fails ({err}): sudo apt install "
                                   "--reinstall espeak-ng")
            return
        version = first.split("Data at:")[0].strip()
        yield ok("espeak-ng", f"{version} ({exe})")

    def check_pyttsx3(self) -> Iterable[Line]:
        try:
            version = importlib.metadata.version("pyttsx3")
        except importlib.metadata.PackageNotFoundError:
            yield fix("pyttsx3", "not installed: .venv/bin/pip install pyttsx3 (meanwhile the "
                                 "referee renders with espeak-ng directly)")
            return
        start = time.monotonic()
        try:
            done = subprocess.run([sys.executable, "-c", _PYTTSX3_PROBE], capture_output=True,
                                  text=True, timeout=PYTTSX3_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            yield fix("pyttsx3", f"{version}: init hangs (> {PYTTSX3_TIMEOUT_S:g} s): check "
                                 "espeak-ng (sudo apt install espeak-ng libespeak-ng1); the "
                                 "referee falls back to espeak-ng meanwhile")
            return
        took = time.monotonic() - start
        if done.returncode != 0:
            err = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            yield fix("pyttsx3", f"{version}: init fails ({err[:160]}): sudo apt install "
                                 "espeak-ng libespeak-ng1; the referee falls back to espeak-ng "
                                 "meanwhile")
            return
        voices = done.stdout.strip() or "?"
        yield ok("pyttsx3", f"{version}: starts in {took:.1f} s, {voices} voices")

    def check_voice(self) -> Iterable[Line]:
        """With `[speech] voice = "piper..."`: whether that Piper voice speaks (one phrase
        rendered with it); a missing or broken model is named with the espeak-ng fallback."""
        speech = self._config().speech
        from referee.voice.speech import SpeechOptions, piper_line

        try:
            options = SpeechOptions.coerce(speech)
        except (ValueError, RuntimeError):
            return  # the config line says what is wrong
        if not options.piper:
            return
        good, text = piper_line(options)
        yield Line(good, "voice", text.removeprefix("voice: "))

    # -- storage and network -----------------------------------------------------------------

    def check_database(self) -> Iterable[Line]:
        """Checked, never created: the doctor makes no database, no folder, no file beside one
        (as root, before the service's first start, it would be root's)."""
        from referee.cli.table import default_db
        from referee.store.database import StoreError, connect

        given = getattr(self.args, "db", None) or self._config().db
        path = Path(given) if given else default_db()
        volatile = volatile_storage(path)
        if volatile:
            yield fix("database", volatile)
            return
        if not path.exists():
            blocked = _not_creatable(path)
            if blocked:
                yield fix("database", f"{path} cannot be opened ({blocked}): make {path.parent} "
                                      "a writable folder for this user, or give --db PATH")
            else:
                yield ok("database", f"{path} not created yet: the referee creates it at its "
                                     "first start (this user may)")
            return
        try:
            owner = path.stat().st_uid
            if os.geteuid() == 0 and owner != 0:  # read it as it is: leave nothing of root's
                yield from self._database_read_only(path, owner)
                return
            if path.stat().st_size:  # damaged, foreign or newer: read only, its own line
                connect(path, readonly=True).close()
            conn = sqlite3.connect(path.resolve().as_uri() + "?mode=rw", uri=True,
                                   isolation_level=None)
        except StoreError as exc:  # (BadDatabase among them) the line says the fix
            yield fix("database", str(exc))
            return
        except (OSError, sqlite3.Error) as exc:
            yield fix("database", f"{path} cannot be opened ({exc}): make {path.parent} a "
                                  "writable folder for this user, or give --db PATH")
            return
        try:
            mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("CREATE TABLE referee_doctor_probe (x)")
                conn.execute("INSERT INTO referee_doctor_probe VALUES (1)")
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            count = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        except sqlite3.Error as exc:
            yield fix("database", f"{path} is not writable ({exc}): check its permissions and "
                                  "those of its folder (the -wal and -shm files live there too)")
            return
        finally:
            conn.close()
        if mode != "wal":
            yield fix("database", f"{path}: journal mode {mode}, not WAL (a network or odd file "
                                  "system?): keep the database on the Pi's own storage")
            return
        yield ok("database", f"{path} (WAL, writable, {count} game{'s' * (count != 1)})")

    def _database_read_only(self, path: Path, owner: int) -> Iterable[Line]:
        try:
            name = pwd.getpwuid(owner).pw_name
        except KeyError:
            name = f"uid {owner}"
        try:
            conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro&immutable=1", uri=True)
            try:
                count = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error as exc:
            yield fix("database", f"{path} cannot be read ({exc}): is it the referee's?")
            return
        yield ok("database", f"{path} ({name}'s, {count} game{'s' * (count != 1)}; read only, "
                             f"so that root leaves no file beside it: run the doctor as {name} "
                             "to check writing)")

    def check_scoreboard(self) -> Iterable[Line]:
        config = self._config()
        host, port = config.host, config.port
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if host in WILDCARD_HOSTS and not config.pin:
            yield fix("scoreboard", f"{shown} is open to the whole network without a PIN: set "
                                    'pin = "NNNN" in [table] (or start with --pin NNNN)')
            return
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:  # as waitress will: SO_REUSEADDR, bind, listen (a bound socket is not yet a server)
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((host, port))
                sock.listen()
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                yield fix("scoreboard", f"{shown} is already in use (the referee service, or "
                                        "another program): stop it, or set port = 8080 in "
                                        "[table]")
            elif exc.errno == errno.EACCES:
                yield fix("scoreboard", f"{shown}: ports below 1024 need root; use e.g. "
                                        "port = 8000 in [table]")
            else:
                yield fix("scoreboard", f"{shown} cannot be served ({exc.strerror or exc}): set "
                                        "host to an address of this machine, e.g. 0.0.0.0 (with "
                                        "a PIN) or 127.0.0.1")
            return
        if host in WILDCARD_HOSTS:
            yield ok("scoreboard", f"http://{shown}/ on every network interface; judge actions "
                                   "need the table PIN")
        else:
            yield ok("scoreboard", f"http://{shown}/")


# How a button is wired, in the same words as wiring.md ("How to wire a button").
BUTTON_WIRING = ("{at} to the microswitch's COM tab, its NO (normally open) tab to ground{gnd}; "
                 "leave NC free, never wire the pin straight to ground")


def where_free(spare: list[int]) -> str:
    return "others: " + ", ".join(str(p) for p in spare[:4]) if spare else "no other free one"


def lgpio_cause(warning: str) -> str:
    """The real reason lgpio did not load, from gpiozero's fallback warning."""
    if ".lgd-nfy" in warning or "Permission denied" in warning:
        return (f"it makes its notification pipe (.lgd-nfy*) in the current directory "
                f"{os.getcwd()!r}, which this user cannot write ({warning.strip()}); run from a "
                "writable directory (the service runs in /var/lib/table-referee)")
    if "No module named" in warning:
        return ("python3-lgpio is not installed, or the venv cannot see it: sudo apt install "
                "python3-lgpio; the venv needs --system-site-packages")
    return warning.strip()


MOUNTINFO = Path("/proc/self/mountinfo")


def volatile_storage(path: Path, mountinfo: Path | None = None) -> str | None:
    """Why a database at `path` would not survive a pulled plug: the mount holding it is
    Raspberry Pi OS's overlay root (raspi-config's Overlay File System: initramfs overlayroot,
    writes go to RAM), a tmpfs, or read-only; None when it is ordinary storage (or unknown)."""
    try:
        lines = (mountinfo or MOUNTINFO).read_text().splitlines()
    except OSError:
        return None
    target = os.path.abspath(path)
    best: tuple[int, str, str, str] | None = None
    for line in lines:
        head, sep, tail = line.partition(" - ")
        fields, more = head.split(), tail.split()
        if not sep or len(fields) < 6 or len(more) < 2:
            continue
        point = fields[4].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) > best[0]):
            best = (len(point), more[0], more[1], fields[5])
    if best is None:
        return None
    _, fstype, source, options = best
    fix = ("turn the overlay off (sudo raspi-config: Performance Options, Overlay File System) "
           "or give --db on a writable partition")
    if fstype == "overlay" and source == "overlayroot":
        return f"the root is an overlay in RAM (overlayroot): the game log is lost at power-off; {fix}"
    if fstype in ("tmpfs", "ramfs"):
        return f"{path} is on {fstype} (RAM): the game log is lost at power-off; give --db on the SD card"
    if "ro" in options.split(","):
        return f"{path} is on a read-only file system: nothing can be logged; {fix}"
    return None


def _not_creatable(path: Path) -> str:
    """Why this user could not create `path` (and its missing folders); "" if it could."""
    here = path.parent
    while not here.exists():
        here = here.parent
    if not here.is_dir():
        return f"{here} is a file, not a folder"
    if not os.access(here, os.W_OK | os.X_OK):
        return f"{here} is not writable by this user"
    return ""


def _in_group(name: str) -> bool | None:
    try:
        gid = grp.getgrnam(name).gr_gid
    except KeyError:
        return None
    return gid in os.getgroups() or gid == os.getgid()


def _pin_line(role: str, bcm: int, state: str) -> Line:
    seat, _, what = role.rpartition(" ")
    if seat == "judge":
        role = f"Judge {what.upper()}"
    is_button = what in ("slap", "double", "yes", "no", "undo") and not role.startswith("LED")
    label = f"button {role}" if is_button else role
    if is_button and state in ("pressed", "stuck"):
        from referee.capture.header import header_pin, nearest_ground

        pin = header_pin(bcm)
        at = f"pin {pin}" if pin is not None else f"BCM {bcm}"
        gnd = f" (e.g. pin {nearest_ground(pin)})" if pin is not None else ""
        return fix(label, f"{where(bcm)} reads pressed at rest: free the stuck button, or fix "
                          f"the wiring — {BUTTON_WIRING.format(at=at, gnd=gnd)}")
    return ok(label, f"{where(bcm)}, {state}")


def run_doctor(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """`referee doctor`: 0 when every check is ok, 1 when a line says FIX."""
    return Doctor(args, out if out is not None else sys.stdout).run()
