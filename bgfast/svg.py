"""SVG pictures of positions, for Jupyter (``Position._repr_svg_``),
``bgfast show --svg`` and the analysis HTML report.

The player on roll (X, light checkers) is at the bottom moving from the
24-point (top right) to the 1-point (bottom right), as in the ASCII diagram.
"""
from __future__ import annotations

from html import escape

__all__ = ["board_svg"]

W, H = 520, 400          # drawing size
M = 20                   # margin around the board
BAR = 36                 # bar width
OFF = 36                 # bear-off tray width (right side)
PT = (W - 2 * M - BAR - OFF) / 12    # point width
R = PT * 0.45            # checker radius
COLOURS = {"board": "#2e6b3a", "frame": "#5a3a1a", "dark": "#8b5a2b", "light": "#d9b77e",
           "X": "#f4f1e8", "O": "#222222", "Xedge": "#555", "Oedge": "#000"}


def _point_x(p: int) -> float:
    """Centre x of my point p (1..24)."""
    if p <= 12:          # bottom row, 12 at the left .. 1 at the right
        col = 12 - p
    else:                # top row, 13 at the left .. 24 at the right
        col = p - 13
    x = M + col * PT + PT / 2
    if col >= 6:
        x += BAR
    return x


def _checker(x, y, who, label=None):
    fill, edge = COLOURS[who], COLOURS[who + "edge"]
    out = f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{R:.1f}" fill="{fill}" stroke="{edge}" stroke-width="1.5"/>'
    if label is not None:
        colour = "#000" if who == "X" else "#fff"
        out += (f'<text x="{x:.1f}" y="{y + 4:.1f}" font-size="12" text-anchor="middle" '
                f'fill="{colour}" font-family="sans-serif">{label}</text>')
    return out


def _stack(x, top: bool, n: int, who: str, base: float | None = None):
    parts = []
    shown = min(n, 5)
    for k in range(shown):
        if top:
            y = (base if base is not None else M) + R + 2 + k * 2 * R
        else:
            y = (base if base is not None else H - M) - R - 2 - k * 2 * R
        label = n if (k == shown - 1 and n > 5) else None
        parts.append(_checker(x, y, who, label))
    return "".join(parts)


def board_svg(position, *, title: str | None = None) -> str:
    """An SVG document (a string) showing ``position``."""
    b = position.board
    me, opp = b[1], b[0]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H + 30}" '
             f'viewBox="0 0 {W} {H + 30}" role="img">']
    if title:
        parts.append(f"<title>{escape(title)}</title>")
    parts.append(f'<rect x="0" y="0" width="{W}" height="{H}" fill="{COLOURS["frame"]}"/>')
    parts.append(f'<rect x="{M}" y="{M}" width="{W - 2 * M - OFF}" height="{H - 2 * M}" '
                 f'fill="{COLOURS["board"]}"/>')
    bar_x = M + 6 * PT
    parts.append(f'<rect x="{bar_x}" y="{M}" width="{BAR}" height="{H - 2 * M}" fill="{COLOURS["frame"]}"/>')
    for p in range(1, 25):
        x = _point_x(p)
        top = p > 12
        colour = COLOURS["dark"] if p % 2 else COLOURS["light"]
        y0 = M if top else H - M
        tip = y0 + (H - 2 * M) * 0.42 * (1 if top else -1)
        parts.append(f'<polygon points="{x - PT / 2:.1f},{y0} {x + PT / 2:.1f},{y0} {x:.1f},{tip:.1f}" '
                     f'fill="{colour}"/>')
        label_y = M - 6 if top else H - M + 15
        parts.append(f'<text x="{x:.1f}" y="{label_y}" font-size="10" text-anchor="middle" '
                     f'fill="#eee" font-family="sans-serif">{p}</text>')
        mine, theirs = int(me[p - 1]), int(opp[24 - p])
        if mine:
            parts.append(_stack(x, top, mine, "X"))
        elif theirs:
            parts.append(_stack(x, top, theirs, "O"))
    cx = bar_x + BAR / 2
    if opp[24]:
        parts.append(_stack(cx, True, int(opp[24]), "O", base=M + (H - 2 * M) * 0.18))
    if me[24]:
        parts.append(_stack(cx, False, int(me[24]), "X", base=H - M - (H - 2 * M) * 0.18))
    tray_x = W - M - OFF + 4
    off_me, off_opp = position.borne_off()
    for n, who, y in ((off_opp, "O", M), (off_me, "X", H - M - 14 * 1.0)):
        for k in range(n):
            yy = (y + 2 + k * 6) if who == "O" else (y - k * 6)
            parts.append(f'<rect x="{tray_x}" y="{yy:.1f}" width="{OFF - 8}" height="5" '
                         f'fill="{COLOURS[who]}" stroke="{COLOURS[who + "edge"]}" stroke-width="0.5"/>')
    pips = position.pip_count()
    caption = (f"X (on roll) pips {pips[0]}, off {off_me}  |  O pips {pips[1]}, off {off_opp}  |  "
               f"{position.position_id()}")
    parts.append(f'<text x="{M}" y="{H + 20}" font-size="12" fill="#222" '
                 f'font-family="sans-serif">{escape(caption)}</text>')
    parts.append("</svg>")
    return "".join(parts)
