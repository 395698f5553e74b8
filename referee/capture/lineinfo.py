"""Who holds a GPIO line: the kernel's own answer, from the GPIO character device.

When a pin cannot be opened because it is busy, the useful answer is its *consumer*: the label
the kernel keeps for whoever requested the line (an overlay's driver such as "mute", "lgpio"
for another referee, "spi0 CS0"...). `GPIO_V2_GET_LINEINFO_IOCTL` reads it without root and
without libgpiod: ``struct gpio_v2_line_info`` is 256 bytes (name[32], consumer[32], offset,
num_attrs, flags, 10 attributes of 16 bytes, 4 padding words), and the header's chip is the one
labelled ``pinctrl-rp1`` (Pi 5) or ``pinctrl-bcm2711`` / ``pinctrl-bcm2835`` (older Pis).
"""

from __future__ import annotations

import fcntl
import glob
import os
import struct
from dataclasses import dataclass

GPIO_GET_CHIPINFO_IOCTL = 0x8044B401  # _IOR(0xB4, 0x01, struct gpiochip_info), 68 bytes
GPIO_V2_GET_LINEINFO_IOCTL = 0xC100B405  # _IOWR(0xB4, 0x05, struct gpio_v2_line_info), 256 bytes
LINE_INFO = struct.Struct("<32s32sIIQ160s16s")
CHIP_INFO = struct.Struct("<32s32sI")
FLAG_USED = 1 << 0
FLAG_OUTPUT = 1 << 3
HEADER_LABELS = ("pinctrl-rp1", "pinctrl-bcm2711", "pinctrl-bcm2835")


@dataclass(frozen=True)
class LineInfo:
    name: str  # e.g. "GPIO22"
    consumer: str  # "" when nobody holds it
    used: bool
    output: bool


def parse_line_info(raw: bytes) -> LineInfo:
    name, consumer, _offset, _attrs, flags, _a, _p = LINE_INFO.unpack(raw)
    return LineInfo(name.split(b"\0")[0].decode(errors="replace"),
                    consumer.split(b"\0")[0].decode(errors="replace"),
                    bool(flags & FLAG_USED), bool(flags & FLAG_OUTPUT))


def header_chip() -> str | None:
    """The /dev/gpiochip* carrying the 40-pin header, or None."""
    for path in sorted(glob.glob("/dev/gpiochip*")):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            raw = bytearray(CHIP_INFO.size)
            fcntl.ioctl(fd, GPIO_GET_CHIPINFO_IOCTL, raw)
            label = CHIP_INFO.unpack(bytes(raw))[1].split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        finally:
            os.close(fd)
        if label in HEADER_LABELS:
            return path
    return None


def line_info(bcm: int, chip: str | None = None) -> LineInfo | None:
    """What the kernel says about BCM `bcm` on the header's chip (None if it cannot say)."""
    chip = chip or header_chip()
    if chip is None:
        return None
    try:
        fd = os.open(chip, os.O_RDONLY)
    except OSError:
        return None
    try:
        raw = bytearray(LINE_INFO.size)
        struct.pack_into("<I", raw, 64, bcm)  # the offset field
        fcntl.ioctl(fd, GPIO_V2_GET_LINEINFO_IOCTL, raw)
        return parse_line_info(bytes(raw))
    except OSError:
        return None
    finally:
        os.close(fd)
