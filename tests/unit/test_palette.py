"""The category colours stay distinguishable for people with the common colour-vision
deficiencies, and the pending-selection style looks like no category.

Method: each colour is simulated for protanopia, deuteranopia and tritanopia with the
matrices of Machado, Oliveira & Fernandes (2009, "A physiologically-based model for
simulation of color vision deficiency", IEEE TVCG 15(6), severity 1.0, applied to linear
sRGB), converted to CIELAB (D65) and compared with CIEDE2000 (Sharma, Wu & Dalal 2005).
Every pair of colours of a palette must be at least MIN_DELTA_E apart under normal vision
and under each simulation. Text on a colour must keep WCAG 2's 4.5:1 contrast.
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import pytest

from app.taxonomy import PALETTE, load_taxonomy

ROOT = Path(__file__).resolve().parents[2]
BASE_CSS = ROOT / "static" / "css" / "base.css"


def base_colour(name: str) -> str:
    """A colour custom property of base.css (`--text`), as #rrggbb or #rgb."""
    found = re.search(rf"--{name}:\s*(#[0-9a-fA-F]{{3,6}})\b", BASE_CSS.read_text(encoding="utf-8"))
    assert found, f"base.css declares --{name}"
    return found.group(1)


TEXT = base_colour("text")
MIN_DELTA_E = 7.0

MACHADO = {
    "protanopia": (
        (0.152286, 1.052583, -0.204868),
        (0.114503, 0.786281, 0.099216),
        (-0.003882, -0.048116, 1.051998),
    ),
    "deuteranopia": (
        (0.367322, 0.860646, -0.227968),
        (0.280085, 0.672501, 0.047413),
        (-0.011820, 0.042940, 0.968881),
    ),
    "tritanopia": (
        (1.255528, -0.076749, -0.178779),
        (-0.078411, 0.930809, 0.147602),
        (0.004733, 0.691367, 0.303900),
    ),
}
VISIONS = ("normal", *MACHADO)


def linear_rgb(hex_color: str) -> tuple[float, float, float]:
    """sRGB #rgb/#rrggbb -> linear RGB in [0, 1]."""
    digits = hex_color.lstrip("#")
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    channels = [int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    return tuple(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)


def simulate(rgb: tuple[float, float, float], vision: str) -> tuple[float, float, float]:
    """Linear RGB as seen with the given vision (Machado 2009, severity 1)."""
    if vision == "normal":
        return rgb
    matrix = MACHADO[vision]
    return tuple(
        min(1.0, max(0.0, sum(m * c for m, c in zip(row, rgb, strict=True)))) for row in matrix
    )


def lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    """Linear sRGB -> CIELAB under D65."""
    r, g, b = rgb
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def ciede2000(lab1: tuple[float, float, float], lab2: tuple[float, float, float]) -> float:
    """CIEDE2000 colour difference (kL = kC = kH = 1), after Sharma, Wu & Dalal (2005)."""
    l1, a1, b1 = lab1
    l2, a2, b2 = lab2
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar**7 / (c_bar**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dl, dc = l2 - l1, c2p - c1p
    if c1p * c2p == 0:
        dh = 0.0
    elif abs(h2p - h1p) <= 180:
        dh = h2p - h1p
    else:
        dh = h2p - h1p - 360 if h2p > h1p else h2p - h1p + 360
    dh_big = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    l_bar, cp_bar = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_bar = (h1p + h2p) / 2
    else:
        h_bar = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(h_bar - 30))
        + 0.24 * math.cos(math.radians(2 * h_bar))
        + 0.32 * math.cos(math.radians(3 * h_bar + 6))
        - 0.20 * math.cos(math.radians(4 * h_bar - 63))
    )
    d_theta = 30 * math.exp(-(((h_bar - 275) / 25) ** 2))
    r_c = 2 * math.sqrt(cp_bar**7 / (cp_bar**7 + 25**7))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / math.sqrt(20 + (l_bar - 50) ** 2)
    s_c = 1 + 0.045 * cp_bar
    s_h = 1 + 0.015 * cp_bar * t
    r_t = -math.sin(math.radians(2 * d_theta)) * r_c
    return math.sqrt(
        (dl / s_l) ** 2 + (dc / s_c) ** 2 + (dh_big / s_h) ** 2 + r_t * (dc / s_c) * (dh_big / s_h)
    )


def distance(color1: str, color2: str, vision: str) -> float:
    """CIEDE2000 between two sRGB colours as seen with `vision`."""
    return ciede2000(
        lab(simulate(linear_rgb(color1), vision)), lab(simulate(linear_rgb(color2), vision))
    )


def closest_pair(colors: list[str]) -> tuple[float, str]:
    """The smallest distance between two of the colours, under any vision, and where."""
    return min(
        (distance(a, b, vision), f"{a} vs {b} ({vision})")
        for a, b in itertools.combinations(colors, 2)
        for vision in VISIONS
    )


def contrast(color1: str, color2: str) -> float:
    """WCAG 2 contrast ratio."""
    lum = [
        0.2126 * r + 0.7152 * g + 0.0722 * b for r, g, b in (linear_rgb(color1), linear_rgb(color2))
    ]
    return (max(lum) + 0.05) / (min(lum) + 0.05)


def pending_style() -> tuple[str, str]:
    """The pending-selection fill and text colours declared in base.css."""
    return base_colour("pending-fill"), base_colour("pending-text")


# Sharma, Wu & Dalal (2005), Table 1: pairs 1, 7, 13, 19, 25 and 34.
SHARMA_PAIRS = [
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0011), 7.2195),
    ((50.0, 2.5, 0.0), (50.0, 0.0, -2.5), 4.3065),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((2.0776, 0.0795, -1.135), (0.9033, -0.0636, -0.5514), 0.9082),
]


@pytest.mark.parametrize(("lab1", "lab2", "expected"), SHARMA_PAIRS)
def test_ciede2000_matches_the_published_test_data(lab1, lab2, expected):
    assert ciede2000(lab1, lab2) == pytest.approx(expected, abs=1e-4)


def test_the_simulation_confuses_what_dichromats_confuse():
    """Red and green, far apart for normal vision, come close under deuteranopia."""
    assert distance("#cc3333", "#669900", "normal") > 40
    assert distance("#cc3333", "#669900", "deuteranopia") < 15


def taxonomy_colours(path: str) -> list[str]:
    """The category colours of a taxonomy file of this repository."""
    return [category.color for category in load_taxonomy(ROOT / path).categories]


@pytest.mark.parametrize(
    "palette",
    [
        pytest.param(list(PALETTE), id="fallback"),
        pytest.param(taxonomy_colours("config/taxonomy.yaml"), id="default"),
        pytest.param(taxonomy_colours("config/taxonomies/booookscore.yaml"), id="booookscore"),
    ],
)
def test_category_colours_stay_apart_under_colour_vision_deficiencies(palette):
    gap, where = closest_pair(palette)
    assert gap >= MIN_DELTA_E, f"CIEDE2000 {gap:.1f} < {MIN_DELTA_E}: {where}"
    for color in palette:
        assert contrast(color, TEXT) >= 4.5, f"text on {color}"


def test_the_pending_selection_looks_like_no_category():
    fill, text = pending_style()
    assert contrast(fill, text) >= 4.5
    default = taxonomy_colours("config/taxonomy.yaml")
    for color in {*PALETTE, *default}:
        for vision in VISIONS:
            assert distance(fill, color, vision) >= 3 * MIN_DELTA_E, (color, vision)
