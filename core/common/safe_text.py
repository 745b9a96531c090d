"""Untrusted text made safe to show: control and bidi characters become visible escapes.

Kernel names, NVTX ranges, process names, file paths and the output of ncu or of a remote host are
text flopscope did not write. Printed as they are, an ESC starts a terminal sequence (clear the
screen, retitle the window, write the clipboard with OSC 52, forge an OSC 8 link), a newline splits
a table row in two, and a bidi override shows `exe.cu` reversed as `uc.exe`. Every place that shows
such text passes it through `display_text`; the data itself (the kernels table, JSON, Parquet) keeps
the original string.

What is escaped, and why:
- C0 controls (U+0000-001F), DEL (U+007F) and C1 controls (U+0080-009F): ESC and 8-bit CSI start
  terminal sequences, BEL/BS/CR/VT/FF move the cursor or ring; newline and tab break the layout of a
  table line.
- Bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069) and the invisible bidi marks
  (U+200E, U+200F, U+061C): they reorder what follows them ("Trojan Source", CVE-2021-42574). The
  marks are included because they too move neutral characters (`.`, `_`, digits) across a name, and
  a kernel name has no use for an invisible mark.
- Line and paragraph separators (U+2028, U+2029): some terminals and widgets break the line there.
- Zero-width characters (U+200B-200D, U+2060, U+FEFF): invisible, so two names that differ only by
  one look identical, and some terminals give them a cell while others do not, which shifts the rest
  of a table row.
Backslashes are left alone: Windows paths stay readable; an escape is therefore a hint, not a proof,
that the original held a control character (JSON output says exactly what it held)."""

from __future__ import annotations

import re

_SHORT = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}{_ZERO_WIDTH}\u2028\u2029]")


def _escape(char: str) -> str:
    code = ord(char)
    return _SHORT.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def display_text(text: object, keep_newlines: bool = False) -> str:
    """`text` (anything, as `str` shows it) with every character that could drive a terminal or
    reorder what is shown as a visible escape: ESC -> `\\x1b`, U+202E -> `\\u202e`, newline ->
    `\\n`, tab -> `\\t`. `keep_newlines` keeps line breaks, for multi-line output shown as lines (a
    log)."""
    text = str(text)
    # The common case, names and paths as they should be, returned as they are. isprintable() is
    # false for every character escaped here (categories Cc, Cf, Zl, Zp) and is cheaper than the
    # regex on a long C++ name.
    if text.isprintable() or not _UNSAFE.search(text):
        return text
    if keep_newlines:
        return "\n".join(
            _UNSAFE.sub(lambda m: _escape(m.group()), line) for line in text.split("\n")
        )
    return _UNSAFE.sub(lambda m: _escape(m.group()), text)


def safe_file_name(name: str) -> str:
    """`name` with each character `display_text` would escape replaced by `_`: a file name flopscope
    proposes (an export named after a report whose own name carries escape sequences) is one a
    terminal shows as it is and a shell takes without quoting tricks."""
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() or not _UNSAFE.match(c) else "_" for c in name)
