"""Removes the TrueType hinting from Noto Sans (development time; needs fontTools from PyPI).

    pip install fonttools
    python3 dehint.py /usr/share/fonts/truetype/noto ../fonts

Reads NotoSans-Regular.ttf and NotoSans-Bold.ttf from Debian's fonts-noto-core, drops the
fpgm, prep and cvt tables and every glyph's instructions, zeroes the instruction limits in maxp,
and writes the result. Everything else (outlines, metrics, cmap, GSUB/GPOS/GDEF byte for byte)
is kept, which the script checks before it writes.

Why: PDF viewers rasterise embedded fonts without hinting, but krilla embeds whatever the font
carries. The instructions were 40 % of each per-document subset, so they were deflated and
written into every PDF for nothing (see BENCHMARKS.md, "PDF rendering").
"""

import sys
from pathlib import Path

from fontTools.ttLib import TTFont
from fontTools.ttLib.tables import ttProgram


def dehint(src: Path, dst: Path) -> None:
    font = TTFont(src, recalcTimestamp=False)
    for table in ("fpgm", "prep", "cvt "):
        if table in font:
            del font[table]
    glyf = font["glyf"]
    for name in font.getGlyphOrder():
        glyph = glyf[name]
        if glyph.isComposite() or glyph.numberOfContours > 0:
            glyph.program = ttProgram.Program()
            glyph.program.fromBytecode(b"")
    maxp = font["maxp"]
    maxp.maxZones = 1
    for field in ("maxTwilightPoints", "maxStorage", "maxFunctionDefs", "maxInstructionDefs",
                  "maxStackElements", "maxSizeOfInstructions"):
        setattr(maxp, field, 0)
    font.save(dst)

    before, after = TTFont(src), TTFont(dst)
    assert before.getGlyphOrder() == after.getGlyphOrder()
    assert before["hmtx"].metrics == after["hmtx"].metrics
    assert before.getBestCmap() == after.getBestCmap()
    for table in ("GPOS", "GSUB", "GDEF", "OS/2", "hhea", "name"):
        assert before.reader[table] == after.reader[table], table
    for name in before.getGlyphOrder():
        a, b = before["glyf"][name], after["glyf"][name]
        assert a.numberOfContours == b.numberOfContours, name
        if a.numberOfContours > 0:
            assert list(a.coordinates) == list(b.coordinates), name


if __name__ == "__main__":
    src_dir, dst_dir = Path(sys.argv[1]), Path(sys.argv[2])
    for weight in ("Regular", "Bold"):
        dehint(src_dir / f"NotoSans-{weight}.ttf", dst_dir / f"NotoSans-{weight}.ttf")
