"""Link the PTX of several translation units (`nvcc -rdc=true`) into one module, as the CUDA driver's JIT
linker does: one header, every definition once, and `.extern` declarations of functions and variables that
another unit defines dropped (their uses then resolve to that definition inside the one module).

Example:
    >>> head = ".version 8.0\\n.target sm_90\\n.address_size 64\\n"
    >>> a = head + ".extern .func f\\n(\\n)\\n;\\n.visible .entry k() { call f, (); ret; }"
    >>> b = head + ".visible .func f() { ret; }"
    >>> print(link_ptx([a, b]).count(".extern"))
    0
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*\.(version|target|address_size)\b.*$", re.M)
_EXTERN = re.compile(r"^\s*\.extern\s+(\.func|\.global|\.const|\.shared)\b[^;]*?;", re.M | re.S)
_DEFINED = re.compile(r"^\s*\.(?:visible|weak)\s+(?:\.func|\.entry|\.global|\.const)\b[^;{=]*?([\w$]+)\s*[\[(;{=]",
                      re.M)


def _extern_name(decl: str) -> str | None:
    """The name an `.extern` declaration declares: `.extern .func (.param .b32 r) name (...)`,
    `.extern .func name (...)`, or `.extern .global .align 4 .b8 name[16];`."""
    if ".func" in decl:
        m = re.search(r"\.func\s*(?:\([^)]*\)\s*)?([\w$]+)", decl)
    else:
        m = re.search(r"([\w$]+)\s*(?:\[[^\]]*\])*\s*;\s*$", decl)
    return m.group(1) if m else None


def link_ptx(modules: list[str]) -> str:
    """One PTX module from several; a single module is returned unchanged."""
    if len(modules) == 1:
        return modules[0]
    if not modules:
        return ".version 8.0\n.target sm_90\n.address_size 64\n"
    defined = {m.group(1) for text in modules for m in _DEFINED.finditer(text)}
    versions = [m.group(0).strip() for m in _HEADER.finditer(modules[0])]
    out = ["\n".join(versions)]
    for text in modules:
        body = _HEADER.sub("", text)
        body = _EXTERN.sub(lambda m: "" if _extern_name(m.group(0)) in defined else m.group(0), body)
        out.append(body)
    return "\n".join(out)
