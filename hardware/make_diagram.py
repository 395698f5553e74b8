"""Draw the Table Referee wiring diagram as SVG (hardware/wiring.svg).

The SVG is the source of truth for the picture; hardware/wiring.png is rendered from it:

    python hardware/make_diagram.py            # writes hardware/wiring.svg
    rsvg-convert -w 1800 hardware/wiring.svg -o hardware/wiring.png

Standard library only, so it runs on the Pi too. The pin assignment below is the default wiring
(the same table as referee/config.py's DEFAULT_WIRING and wiring.md); tests/test_wiring.py keeps
them in step.
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent

# Physical pin -> header function, 40-pin header of every Pi since the B+ (Zero 2 W, 3, 4, 5).
HEADER: dict[int, str] = {
    1: "3V3", 2: "5V", 3: "BCM2", 4: "5V", 5: "BCM3", 6: "GND", 7: "BCM4", 8: "BCM14",
    9: "GND", 10: "BCM15", 11: "BCM17", 12: "BCM18", 13: "BCM27", 14: "GND", 15: "BCM22",
    16: "BCM23", 17: "3V3", 18: "BCM24", 19: "BCM10", 20: "GND", 21: "BCM9", 22: "BCM25",
    23: "BCM11", 24: "BCM8", 25: "GND", 26: "BCM7", 27: "BCM0", 28: "BCM1", 29: "BCM5",
    30: "GND", 31: "BCM6", 32: "BCM12", 33: "BCM13", 34: "GND", 35: "BCM19", 36: "BCM16",
    37: "BCM26", 38: "BCM20", 39: "GND", 40: "BCM21",
}

SEATS: list[tuple[str, str]] = [
    ("Blue", "#1f6feb"), ("Red", "#d1242f"), ("Green", "#1a7f37"), ("Yellow", "#d4a72c"),
    ("Purple", "#8250df"), ("Orange", "#e16f24"), ("Pink", "#e85aad"), ("Teal", "#1b9aaa"),
]
SLAP = [4, 17, 27, 22, 5, 6, 13, 26]
DOUBLE = [23, 24, 25, 12]
JUDGE = {"YES": 16, "NO": 9, "UNDO": 7}
LEDS = {"data": 10, "clock": 11, "latch": 8}
RESERVED = {0: "HAT ID EEPROM", 1: "HAT ID EEPROM", 2: "I2C SDA", 3: "I2C SCL",
            18: "I2S audio", 19: "I2S audio", 20: "I2S audio", 21: "I2S audio",
            14: "UART TX (left free)", 15: "UART RX (left free)"}

INK = "#24292f"
MUTED = "#8c959f"
JUDGE_INK = "#57606a"
KEYPAD = "#953800"
LED_INK = "#0a3069"
FONT = "DejaVu Sans, Liberation Sans, Arial, sans-serif"


def role(bcm: int) -> tuple[str, str]:
    """What the default wiring does with a BCM pin: (label, colour)."""
    if bcm in SLAP:
        seat = SLAP.index(bcm)
        return f"Seat {seat + 1} {SEATS[seat][0]}: slap", SEATS[seat][1]
    if bcm in DOUBLE:
        seat = DOUBLE.index(bcm)
        return f"Seat {seat + 1} {SEATS[seat][0]}: double", SEATS[seat][1]
    for key, pin in JUDGE.items():
        if pin == bcm:
            return f"Judge {key}", KEYPAD
    for key, pin in LEDS.items():
        if pin == bcm:
            return f"LEDs 74HC595 {key}", LED_INK
    return f"not used ({RESERVED[bcm]})" if bcm in RESERVED else "free", MUTED


class Svg:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.parts: list[str] = []

    def add(self, element: str) -> None:
        self.parts.append(element)

    def text(self, x: float, y: float, s: str, size: int = 15, anchor: str = "start",
             fill: str = INK, weight: str = "normal") -> None:
        self.add(f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" '
                 f'fill="{fill}" font-weight="{weight}">{escape(s)}</text>')

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str = INK,
             width: float = 2, dash: str = "") -> None:
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{stroke}" '
                 f'stroke-width="{width}"{extra}/>')

    def path(self, d: str, stroke: str = INK, width: float = 2, fill: str = "none") -> None:
        self.add(f'<path d="{d}" stroke="{stroke}" stroke-width="{width}" fill="{fill}"/>')

    def rect(self, x: float, y: float, w: float, h: float, fill: str = "none",
             stroke: str = INK, width: float = 2, rx: float = 0, dash: str = "") -> None:
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="{rx}" fill="{fill}" '
                 f'stroke="{stroke}" stroke-width="{width}"{extra}/>')

    def circle(self, x: float, y: float, r: float, fill: str, stroke: str = INK) -> None:
        self.add(f'<circle cx="{x}" cy="{y}" r="{r}" fill="{fill}" stroke="{stroke}" '
                 f'stroke-width="1.5"/>')

    def render(self) -> str:
        body = "\n".join(self.parts)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
                f'height="{self.height}" viewBox="0 0 {self.width} {self.height}" '
                f'font-family="{FONT}">\n'
                f'<rect width="100%" height="100%" fill="#ffffff"/>\n{body}\n</svg>\n')


# --- symbols -------------------------------------------------------------------------------

def ground(svg: Svg, x: float, y: float) -> None:
    svg.line(x, y, x, y + 10)
    svg.line(x - 12, y + 10, x + 12, y + 10)
    svg.line(x - 7, y + 15, x + 7, y + 15)
    svg.line(x - 2, y + 20, x + 2, y + 20)


def resistor(svg: Svg, x1: float, y: float, x2: float, label: str) -> None:
    """Horizontal resistor (zig-zag) between x1 and x2."""
    mid = (x1 + x2) / 2
    zig = f"M{x1},{y} L{mid - 24},{y}"
    for i in range(6):
        zig += f" L{mid - 20 + i * 8},{y + (-7 if i % 2 == 0 else 7)}"
    zig += f" L{mid + 24},{y} L{x2},{y}"
    svg.path(zig)
    svg.text(mid, y - 13, label, size=13, anchor="middle")


def switch(svg: Svg, x1: float, y: float, x2: float) -> None:
    """Normally-open push button between x1 and x2 on a horizontal wire."""
    svg.line(x1, y, x1 + 10, y)
    svg.circle(x1 + 12, y, 3, "#ffffff")
    svg.circle(x2 - 12, y, 3, "#ffffff")
    svg.line(x2 - 10, y, x2, y)
    svg.line(x1 + 8, y - 14, x2 - 8, y - 14, width=3)
    svg.line((x1 + x2) / 2, y - 14, (x1 + x2) / 2, y - 26, width=3)


def led(svg: Svg, x: float, y: float, colour: str, down: bool = True) -> None:
    """LED centred on (x, y), leads 16 px each way; points down (anode on top) or up."""
    k = 1 if down else -1
    svg.path(f"M{x - 11},{y - 9 * k} L{x + 11},{y - 9 * k} L{x},{y + 9 * k} Z", fill=colour)
    svg.line(x - 11, y + 9 * k, x + 11, y + 9 * k)
    svg.line(x, y - 16, x, y - 9)
    svg.line(x, y + 9, x, y + 16)
    svg.path(f"M{x + 13},{y - 2} l7,-7 M{x + 15},{y + 5} l7,-7", width=1.5)


# --- panels ------------------------------------------------------------------------------

def header_panel(svg: Svg, x0: float, y0: float) -> None:
    svg.text(x0, y0, "Raspberry Pi 40-pin header (J8), drawn upright", size=17, weight="bold")
    svg.text(x0, y0 + 22, "Pin 1 (square pad) is at the end nearest the microSD slot; the even "
             "pins", size=13, fill=JUDGE_INK)
    svg.text(x0, y0 + 40, "(5V at 2 and 4) are the row along the board's edge. Same on Zero 2 W, "
             "3, 4, 5.", size=13, fill=JUDGE_INK)
    row_h = 27
    cx_odd, cx_even = x0 + 330, x0 + 364
    top = y0 + 72
    svg.rect(cx_odd - 18, top - 18, (cx_even - cx_odd) + 36, 20 * row_h + 10, fill="#f6f8fa",
             rx=6)
    for row in range(20):
        y = top + row * row_h
        for pin, cx, side in ((2 * row + 1, cx_odd, -1), (2 * row + 2, cx_even, 1)):
            name = HEADER[pin]
            if name.startswith("BCM"):
                label, colour = role(int(name[3:]))
                text = f"{name} · {label}" if side > 0 else f"{label} · {name}"
            elif name == "GND":
                label, colour, text = "GND", "#000000", "GND"
            else:
                label, colour, text = name, "#cf222e" if name == "5V" else "#bf8700", name
            svg.circle(cx, y, 10, colour)
            svg.text(cx, y + 4, str(pin), size=10, anchor="middle",
                     fill="#ffffff" if colour not in (MUTED,) else INK, weight="bold")
            tx = cx - 18 if side < 0 else cx + 18
            used = colour not in (MUTED,)
            svg.text(tx, y + 5, text, size=14, anchor="end" if side < 0 else "start",
                     fill=colour if used and colour != "#000000" else (INK if used else MUTED),
                     weight="bold" if used and name.startswith("BCM") else "normal")
    legend_y = top + 20 * row_h + 22
    svg.text(x0, legend_y, "Grey pins stay free: BCM0/1 HAT ID, BCM2/3 I2C, BCM18-21 I2S audio HATs,",
             size=13, fill=JUDGE_INK)
    svg.text(x0, legend_y + 18, "BCM14/15 UART. Every button's other leg goes to any GND pin.",
             size=13, fill=JUDGE_INK)


def button_panel(svg: Svg, x0: float, y0: float) -> None:
    svg.text(x0, y0, "1. Every button (slap, double, judge key)", size=17, weight="bold")
    y = y0 + 70
    svg.rect(x0, y0 + 22, 210, 96, fill="#f6f8fa", rx=6, dash="6,4")
    svg.text(x0 + 10, y0 + 42, "Raspberry Pi", size=13, fill=JUDGE_INK)
    svg.text(x0 + 10, y0 + 110, "internal pull-up ≈ 50 kΩ", size=12, fill=JUDGE_INK)
    svg.text(x0 + 120, y0 + 42, "3V3", size=12, fill="#bf8700")
    svg.line(x0 + 150, y0 + 38, x0 + 150, y0 + 50, stroke="#bf8700")
    svg.path(f"M{x0 + 150},{y0 + 50} l-6,4 l12,6 l-12,6 l12,6 l-6,4 L{x0 + 150},{y}")
    svg.circle(x0 + 210, y, 5, "#1f6feb")
    svg.text(x0 + 100, y + 5, "GPIO", size=13, anchor="middle", weight="bold")
    svg.line(x0 + 150, y, x0 + 210, y)
    svg.line(x0 + 210, y, x0 + 290, y, stroke="#1f6feb", width=3)
    switch(svg, x0 + 290, y, x0 + 370)
    svg.line(x0 + 370, y, x0 + 440, y, width=3)
    svg.text(x0 + 330, y + 26, "arcade button", size=13, anchor="middle")
    svg.text(x0 + 330, y + 42, "(COM + NO legs)", size=12, anchor="middle", fill=JUDGE_INK)
    ground(svg, x0 + 440, y)
    svg.text(x0 + 458, y + 20, "GND", size=13)
    svg.text(x0, y0 + 150, "Not pressed: pin reads high (1). Pressed: pin pulled to ground (0).",
             size=13)
    svg.text(x0, y0 + 168, "No resistor needed; never connect a button to 5V.", size=13)


def led_panel(svg: Svg, x0: float, y0: float) -> None:
    svg.text(x0, y0, "2. Seat LEDs: 74HC595 shift register → ULN2803 driver (sinks LED current)",
             size=17, weight="bold")
    # 74HC595
    cx, cy, cw, ch = x0 + 130, y0 + 40, 130, 300
    svg.rect(cx, cy, cw, ch, fill="#ddf4ff", stroke=LED_INK, rx=4)
    svg.text(cx + cw / 2, cy + 20, "74HC595", size=15, anchor="middle", weight="bold",
             fill=LED_INK)
    svg.text(cx + cw / 2, cy + 36, "VCC 16 → 3V3", size=11, anchor="middle", fill=LED_INK)
    svg.text(cx + cw / 2, cy + ch - 26, "GND 8, OE 13 → GND", size=11, anchor="middle",
             fill=LED_INK)
    svg.text(cx + cw / 2, cy + ch - 10, "MR 10 → 3V3", size=11, anchor="middle", fill=LED_INK)
    inputs = [("DS 14", "data: BCM10 (pin 19)"), ("SHCP 11", "clock: BCM11 (pin 23)"),
              ("STCP 12", "latch: BCM8 (pin 24)")]
    for i, (chip_pin, wire) in enumerate(inputs):
        y = cy + 80 + i * 50
        svg.line(x0 - 40, y, cx, y, stroke=LED_INK)
        svg.text(x0 - 40, y - 7, wire, size=13, fill=LED_INK, weight="bold")
        svg.text(cx + 6, y + 4, chip_pin, size=11, fill=LED_INK)
    # ULN2803
    ux, uw = x0 + 390, 130
    svg.rect(ux, cy, uw, ch, fill="#fff8c5", stroke="#7d4e00", rx=4)
    svg.text(ux + uw / 2, cy + 20, "ULN2803A", size=15, anchor="middle", weight="bold",
             fill="#7d4e00")
    svg.text(ux + uw / 2, cy + ch - 26, "GND 9 → GND", size=11, anchor="middle",
             fill="#7d4e00")
    svg.text(ux + uw / 2, cy + ch - 10, "COM 10 → LED V+", size=11, anchor="middle",
             fill="#7d4e00")
    q_pins = [15, 1, 2, 3, 4, 5, 6, 7]
    lx0 = ux + uw + 40
    led_y = cy + ch + 40
    rail_y = led_y + 40
    for i in range(8):
        y = cy + 50 + i * 28
        colour = SEATS[i][1]
        svg.line(cx + cw, y, ux, y, stroke=colour, width=2)
        svg.text(cx + cw - 6, y + 4, f"Q{i} {q_pins[i]}", size=11, anchor="end", fill=LED_INK)
        svg.text(ux + 6, y + 4, f"{i + 1}B {i + 1}", size=11, fill="#7d4e00")
        svg.text(ux + uw - 6, y + 4, f"{i + 1}C {18 - i}", size=11, anchor="end",
                 fill="#7d4e00")
        # ULN2803 output (sinks current) down to the LED's cathode; anode up from the +V rail
        lx = lx0 + (7 - i) * 40  # seat 8 leftmost, so no output wire crosses another
        svg.path(f"M{ux + uw},{y} L{lx},{y} L{lx},{led_y - 16}", stroke=colour, width=2)
        led(svg, lx, led_y, colour, down=False)
        svg.line(lx, led_y + 16, lx, rail_y, stroke="#cf222e", width=1.5)
        svg.text(lx, rail_y + 18, str(i + 1), size=13, anchor="middle", weight="bold",
                 fill=colour)
    svg.line(lx0 - 10, rail_y, lx0 + 7 * 40 + 10, rail_y, stroke="#cf222e", width=3)
    svg.text(lx0 - 10, rail_y + 40, "LED supply +5 V (or +12 V)", size=13, fill="#cf222e",
             weight="bold")
    svg.text(lx0 - 10, rail_y + 58, "anode to +V, cathode to the ULN2803", size=12)
    svg.text(lx0 - 10, rail_y + 74, "output; bare LEDs need a series resistor", size=12)
    svg.text(x0 - 40, cy + ch + 40, "Q0 lights seat 1 … Q7 lights seat 8. The Pi only drives",
             size=13)
    svg.text(x0 - 40, cy + ch + 58, "three 3.3 V logic inputs; the LED current flows through",
             size=13)
    svg.text(x0 - 40, cy + ch + 76, "the ULN2803 to ground, never through a GPIO pin.",
             size=13)


def direct_led_panel(svg: Svg, x0: float, y0: float) -> None:
    svg.text(x0, y0, "3. Direct LED pin (small builds, led = N)", size=17, weight="bold")
    by = y0 + 150
    svg.circle(x0 + 10, by, 5, "#1f6feb")
    svg.text(x0 + 10, by - 14, "GPIO", size=13, anchor="middle", weight="bold")
    resistor(svg, x0 + 15, by, x0 + 125, "2.2 kΩ")
    svg.line(x0 + 125, by, x0 + 160, by)
    # 100k pull-down to ground from base node
    svg.path(f"M{x0 + 140},{by} L{x0 + 140},{by + 14} l-6,4 l12,6 l-12,6 l12,6 l-6,4 "
             f"L{x0 + 140},{by + 54}")
    svg.text(x0 + 80, by + 40, "100 kΩ", size=12, anchor="middle")
    ground(svg, x0 + 140, by + 54)
    # NPN
    svg.circle(x0 + 180, by, 24, "#ffffff")
    svg.line(x0 + 168, by - 14, x0 + 168, by + 14, width=3)
    svg.line(x0 + 160, by, x0 + 168, by)
    svg.line(x0 + 168, by - 6, x0 + 188, by - 24)
    svg.line(x0 + 168, by + 6, x0 + 188, by + 24)
    svg.path(f"M{x0 + 181},{by + 22} l8,3 l-3,-8 Z", fill=INK)
    svg.text(x0 + 214, by + 5, "NPN 2N3904 / BC337", size=12)
    svg.line(x0 + 188, by + 24, x0 + 188, by + 44)
    ground(svg, x0 + 188, by + 44)
    # collector up to LED and resistor to +5V
    svg.line(x0 + 188, by - 24, x0 + 188, by - 40)
    led(svg, x0 + 188, by - 56, "#d1242f")
    svg.line(x0 + 188, by - 72, x0 + 188, by - 76)
    svg.text(x0 + 214, by - 52, "LED", size=12)
    svg.path(f"M{x0 + 188},{by - 76} l-6,-3 l12,-5 l-12,-5 l12,-5 l-12,-5 l6,-3 "
             f"L{x0 + 188},{by - 106}")
    svg.text(x0 + 204, by - 92, "R: 180 Ω for a bare red LED at 5 V;", size=12)
    svg.text(x0 + 204, by - 78, "none for a 5 V arcade LED", size=12)
    svg.line(x0 + 170, by - 106, x0 + 206, by - 106, stroke="#cf222e", width=3)
    svg.text(x0 + 188, by - 112, "+5 V", size=13, anchor="middle", fill="#cf222e",
             weight="bold")


def notes_panel(svg: Svg, x0: float, y0: float) -> None:
    svg.text(x0, y0, "4. Sound and power", size=17, weight="bold")
    lines = [
        "Pi 3 / 4: 3.5 mm jack to a powered speaker, or HDMI audio.",
        "Zero 2 W / Pi 5 (no jack): USB speaker, HDMI, or an I2S DAC HAT",
        "(the HAT takes BCM18-21, which this wiring leaves free).",
        "12 V button LEDs: separate 12 V supply, its ground joined to Pi GND.",
    ]
    for i, s in enumerate(lines):
        svg.text(x0, y0 + 24 + i * 19, s, size=13)


def build() -> str:
    svg = Svg(1760, 1000)
    svg.text(30, 44, "Table Referee: default wiring (8 seats, 4 double buttons, judge keypad, "
             "seat LEDs)", size=24, weight="bold")
    svg.text(30, 68, "Numbers in circles are PHYSICAL pin numbers; BCMn is the GPIO name used "
             "in config.toml. Source: hardware/make_diagram.py", size=14, fill=JUDGE_INK)
    header_panel(svg, 30, 110)
    button_panel(svg, 800, 110)
    direct_led_panel(svg, 1340, 110)
    led_panel(svg, 840, 380)
    notes_panel(svg, 30, 880)
    return svg.render()


def main() -> None:
    out = HERE / "wiring.svg"
    out.write_text(build(), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
