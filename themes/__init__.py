"""Heedful's Textual themes.

App-specific colours are theme variables (``heedful-user``, ``heedful-assistant``, ...) so that the
.tcss files never name a colour directly and each theme decides them.
"""

from __future__ import annotations

from textual.theme import Theme

HEEDFUL_DARK = Theme(
    name="heedful-dark",
    primary="#5FA8D3",
    secondary="#3D7EA6",
    accent="#E8A33D",
    warning="#E8A33D",
    error="#E0605E",
    success="#6BBF7A",
    foreground="#DDE3EA",
    background="#161B22",
    surface="#1E252E",
    panel="#27303B",
    dark=True,
    variables={
        "heedful-user": "#9CC9E8",
        "heedful-assistant": "#B9D99B",
        "heedful-muted": "#8B96A3",
        "footer-key-foreground": "#E8A33D",
    },
)

HEEDFUL_LIGHT = Theme(
    name="heedful-light",
    primary="#1F5F8B",
    secondary="#2D7BB0",
    accent="#B0661A",
    warning="#9A5B00",
    error="#B3261E",
    success="#2E7D32",
    foreground="#1D2733",
    background="#F6F7F9",
    surface="#ECEFF3",
    panel="#DDE3EA",
    dark=False,
    variables={
        "heedful-user": "#1F5F8B",
        "heedful-assistant": "#2E6B2F",
        "heedful-muted": "#5B6673",
        "footer-key-foreground": "#B0661A",
    },
)

HEEDFUL_HIGH_CONTRAST = Theme(
    # For low vision and bright rooms: pure black and white, every colour at least 7:1 against
    # the background (WCAG AAA), and no dim greys for "muted" text.
    name="heedful-high-contrast",
    primary="#00E5FF",
    secondary="#7FDBFF",
    accent="#FFD700",
    warning="#FFD700",
    error="#FF6B6B",
    success="#00FF7F",
    foreground="#FFFFFF",
    background="#000000",
    surface="#000000",
    panel="#404040",
    dark=True,
    variables={
        "heedful-user": "#7FDBFF",
        "heedful-assistant": "#00FF7F",
        "heedful-muted": "#E0E0E0",
        "footer-key-foreground": "#FFD700",
        "block-cursor-background": "#FFD700",
        "block-cursor-foreground": "#000000",
    },
)

THEMES: tuple[Theme, ...] = (HEEDFUL_DARK, HEEDFUL_LIGHT, HEEDFUL_HIGH_CONTRAST)
DEFAULT_THEME = HEEDFUL_DARK.name
