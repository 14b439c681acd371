"""The comment- and string-aware scan of CUDA C++ source that hipify translates.

hipify must rename identifiers in code and leave comments and string literals alone, and it must rewrite the
header in `#include <cuda_runtime.h>` though that looks like a string. `scan` finds comments, string and character
literals (raw strings too) and include directives in one pass, and returns a *masked* copy of the source: the
same length, with every comment, literal and include directive blanked to spaces (newlines kept), so that later
passes can search the code with plain regular expressions and map every match back to the original text by
position.

Example:
    >>> s = scan('cudaFree(p); // cudaFree\\n#include <cuda.h>\\nputs("cudaFree");\\n')
    >>> s.masked.count("cudaFree"), [(d.path, d.line) for d in s.includes]
    (1, [('cuda.h', 2)])
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

# Where a comment, literal or directive can start; everything between such places is code, skipped at C speed.
_CANDIDATE = re.compile(r"""[/"'#]""")
_LINE_COMMENT = re.compile(r"//(?:[^\n\\]|\\.|\\\n)*")
_BLOCK_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.DOTALL)
_RAW_STRING = re.compile(r"""(?:u8|[uUL])?R"([^()\\ \t\n"]{0,16})\(.*?\)\1"|(?:u8|[uUL])?R".*\Z""", re.DOTALL)
_STRING = re.compile(r"""(?:u8|[uUL])?"(?:[^"\\\n]|\\.|\\\n)*"?""")
_CHAR = re.compile(r"""(?:u8|[uUL])?'(?:[^'\\\n]|\\.)*'?""")
_INCLUDE = re.compile(r"""[ \t]*\#[ \t]*include[ \t]*(?P<open>[<"])(?P<path>[^>"\n]*)[>"]""")
_PREFIXES = ("u8R", "uR", "UR", "LR", "R", "u8", "u", "U", "L")  # of string literals (R: raw) and char literals
_NOT_NEWLINE = re.compile(r"[^\n]")


@dataclass(frozen=True)
class IncludeDirective:
    """One `#include <path>` or `#include "path"` line: where the directive and its path sit in the source."""

    start: int  # offset of the directive's first character (leading blanks included)
    end: int  # offset just past the closing `>` or `"`
    path_start: int
    path_end: int
    path: str
    angled: bool  # <path> rather than "path"
    line: int  # 1-based


@dataclass(frozen=True)
class Token:
    """A stretch of source that is not code: its kind and where it is."""

    kind: str  # "include", "line_comment", "block_comment", "raw_string", "string" or "char"
    start: int
    end: int


@dataclass(frozen=True)
class Scan:
    """What `scan` found: the masked code view, the non-code tokens, the include directives, the line index."""

    source: str
    masked: str
    tokens: tuple[Token, ...]
    includes: tuple[IncludeDirective, ...]
    line_starts: tuple[int, ...]

    def line_of(self, offset: int) -> int:
        """The 1-based line number of a character offset in the source."""
        return bisect_right(self.line_starts, offset)


def scan(source: str) -> Scan:
    """Split CUDA C++ source into code and non-code, and find its include directives.

    Args:
        source: the whole translation unit (any text; unterminated comments or literals run to the end of
            the file or line, as a compiler would complain about but hipify need not).

    Returns:
        A `Scan` whose `masked` text equals `source` with comments, string and character literals and include
        directives replaced by spaces (newlines kept, so offsets and line numbers are the same), and whose
        `tokens` list those stretches in order.
    """
    line_starts = tuple(accumulate(map(len, source.splitlines(keepends=True)), initial=0))
    pieces: list[str] = []
    tokens: list[Token] = []
    includes: list[IncludeDirective] = []
    pos = 0
    at = 0
    while (c := _CANDIDATE.search(source, at)) is not None:
        found = _token_at(source, c.start())
        if found is None:
            at = c.start() + 1
            continue
        kind, m = found
        pieces.append(source[pos : m.start()])
        pieces.append(_NOT_NEWLINE.sub(" ", m.group()))
        tokens.append(Token(kind, m.start(), m.end()))
        pos = at = m.end()
        if kind == "include":
            includes.append(
                IncludeDirective(
                    start=m.start(),
                    end=m.end(),
                    path_start=m.start("path"),
                    path_end=m.end("path"),
                    path=m.group("path"),
                    angled=m.group("open") == "<",
                    line=bisect_right(line_starts, m.start()),
                )
            )
    pieces.append(source[pos:])
    masked = "".join(pieces)
    assert len(masked) == len(source)
    return Scan(source=source, masked=masked, tokens=tuple(tokens), includes=tuple(includes), line_starts=line_starts)


def _token_at(source: str, i: int) -> tuple[str, re.Match[str]] | None:
    """The comment, literal or include directive whose telltale character is at `i`, or None (plain code)."""
    ch = source[i]
    if ch == "/":
        nxt = source[i + 1 : i + 2]
        if nxt == "/":
            return "line_comment", _match(_LINE_COMMENT, source, i)
        if nxt == "*":
            return "block_comment", _match(_BLOCK_COMMENT, source, i)
        return None
    if ch == "#":
        line_start = source.rfind("\n", 0, i) + 1
        if source[line_start:i].strip(" \t"):
            return None
        m = _INCLUDE.match(source, line_start)
        return ("include", m) if m else None
    # A quote: find the literal's prefix (u8"", L'', R"()", ...), which must not be the tail of a longer name.
    start, raw = i, False
    for p in _PREFIXES:
        if source.startswith(p, i - len(p)) and (ch == '"' or "R" not in p):
            before = i - len(p) - 1
            if before < 0 or not (source[before].isalnum() or source[before] == "_"):
                start, raw = i - len(p), p.endswith("R")
                break
    if ch == "'" and start == i and _is_digit_separator(source, i):
        return None
    if ch == '"':
        return ("raw_string", _match(_RAW_STRING, source, start)) if raw else ("string", _match(_STRING, source, start))
    return "char", _match(_CHAR, source, start)


def _match(pattern: re.Pattern[str], source: str, i: int) -> re.Match[str]:
    m = pattern.match(source, i)
    assert m is not None, "each token pattern matches at its own telltale character"
    return m


def _is_digit_separator(source: str, i: int) -> bool:
    """Is the quote at `i` inside a number (C++14 `1'000'000`) rather than opening a character literal?"""
    j = i
    while j > 0 and (source[j - 1].isalnum() or source[j - 1] in "_.'"):
        j -= 1
    return j < i and source[j].isdigit()

