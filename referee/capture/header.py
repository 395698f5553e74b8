"""The Pi's 40-pin header: where a BCM number is on it, the nearest ground, and one line for a
failure to open the pins (shared by `referee buttons`, `referee doctor` and the live table)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

# The 40-pin header of every Pi since the B+ (Zero 2 W, 3, 4, 5): BCM number -> physical pin.
HEADER_PIN: Final[Mapping[int, int]] = {
    2: 3, 3: 5, 4: 7, 14: 8, 15: 10, 17: 11, 18: 12, 27: 13, 22: 15, 23: 16, 24: 18, 10: 19,
    9: 21, 25: 22, 11: 23, 8: 24, 7: 26, 0: 27, 1: 28, 5: 29, 6: 31, 12: 32, 13: 33, 19: 35,
    16: 36, 26: 37, 20: 38, 21: 40,
}
GROUND_PINS: Final = (6, 9, 14, 20, 25, 30, 34, 39)

# What the audio HATs take besides I2S (BCM 18-21), I2C (2, 3) and the ID EEPROM (0, 1), from
# Raspberry Pi's audio board documentation. Keys are fragments of the HAT's product string
# (/proc/device-tree/hat/product), matched case-insensitively.
HAT_PINS: Final[Mapping[str, Mapping[int, str]]] = {
    "digiamp": {22: "the DigiAMP+ amplifier mute", 25: "the optional IR receiver"},
    "codec zero": {23: "the Codec Zero's LED / rotary encoder", 24: "the Codec Zero's LED / rotary "
                   "encoder", 27: "the Codec Zero's button", 25: "the optional IR receiver"},
    "codeczero": {23: "the Codec Zero's LED / rotary encoder", 24: "the Codec Zero's LED / rotary "
                  "encoder", 27: "the Codec Zero's button", 25: "the optional IR receiver"},
    "dac": {25: "the optional IR receiver"},
}
# Pins a button may always use, whatever audio HAT is fitted (wiring.md, "HAT-safe pin map").
HAT_SAFE_PINS: Final = (4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 26)


def hat_pins(product: str) -> dict[int, str]:
    """BCM → what the fitted HAT `product` uses it for (I2S, I2C, ID EEPROM and its extras)."""
    uses = {0: "the HAT ID EEPROM", 1: "the HAT ID EEPROM", 2: "I2C (the HAT's control bus)",
            3: "I2C (the HAT's control bus)"}
    uses.update({n: "I2S audio" for n in (18, 19, 20, 21)})
    name = product.casefold()
    for fragment, extra in HAT_PINS.items():
        if fragment in name:
            uses.update(extra)
            break
    return uses


def header_pin(bcm: int) -> int | None:
    """The physical header pin of BCM ``bcm`` (None for a number the header does not carry)."""
    return HEADER_PIN.get(bcm)


def nearest_ground(pin: int) -> int:
    """The ground pin closest to physical ``pin`` on the header (same row side preferred)."""

    def distance(gnd: int) -> tuple[int, int]:
        return abs((gnd - 1) // 2 - (pin - 1) // 2), int(gnd % 2 != pin % 2)

    return min(GROUND_PINS, key=distance)


def where(bcm: int) -> str:
    """"BCM 4, pin 7": both names of a GPIO, as wiring.md writes them."""
    pin = header_pin(bcm)
    return f"BCM {bcm}" if pin is None else f"BCM {bcm}, pin {pin}"



def box_error(exc: BaseException) -> str:
    """One line for a failure to open the pins (shared with `referee doctor`)."""
    cause: BaseException = getattr(exc, "cause", None) or exc
    name = type(cause).__name__
    text = str(exc) or name
    if getattr(exc, "cause", None) is None and type(exc).__name__ == "CaptureError":
        return text
    if name == "BadPinFactory":
        return (f"no GPIO library loads ({text}): on the Pi install lgpio (sudo apt install "
                "python3-lgpio); elsewhere use --mock; referee doctor tells more")
    if name == "GPIOPinInUse" or "busy" in text.lower():
        return (f"a pin is already in use ({text}): stop the running referee first "
                "(sudo systemctl stop table-referee), or run referee doctor to see who holds it")
    if isinstance(exc, PermissionError) or "permission" in text.lower():
        return (f"no permission to use the GPIO ({text}): add yourself to the gpio group "
                "(sudo usermod -aG gpio $USER) and log in again")
    return f"cannot open the pins ({name}: {text}); run referee doctor"
