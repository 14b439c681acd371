# hipify throughput: lines of CUDA source translated per second by strata.hip.hipify on a large input (the
# test corpus, tests/hip/corpus/*.cu, repeated to --lines lines). No hipify exists offline to compare with,
# so the peer is the naive translator hipify-perl's design suggests: one whole-word `re.sub` per table row
# (cudaX -> hipX, headers included) over the whole text, with no lexer (it also rewrites comments and string
# literals, which the row's note counts) and no launch rewriting. The peer is slow (a pass over the text per
# row), so it is timed on the first --peer-lines lines of the same input and its time scaled linearly to the
# whole (the note says so). ratio = peer time / strata time, for the whole input.
# Correctness: strata's translation of the big input must equal its per-file translations concatenated.
#
#   PYTHONPATH=src .venv/bin/python benchmarks/bench_hipify.py [--lines 100000] [--peer-lines 10000] [--repeat 3]

from __future__ import annotations

import argparse
import importlib
import re
import time
from typing import Any

from harness import NO_TARGET, REPO, BenchResult, StrataUnavailable, best_of, format_table, judge, log, strata_step

CORPUS = REPO / "tests" / "hip" / "corpus"
LINES = 100_000
PEER_LINES = 20_000


def build_input(lines: int) -> tuple[list[str], str]:
    """The corpus files repeated until the text has at least `lines` lines; (the file texts used, the text)."""
    files = [p.read_text() for p in sorted(CORPUS.glob("*.cu"))]
    if not files:
        raise StrataUnavailable(f"[hipify] no corpus files under {CORPUS}")
    used: list[str] = []
    total = 0
    while total < lines:
        for text in files:
            used.append(text)
            total += text.count("\n")
    return used, "".join(used)


def naive_translator(table: Any) -> list[tuple[str, re.Pattern[str], str]]:
    """The peer's rules: one compiled whole-word pattern per row that changes text (identifiers and headers)."""
    rules = []
    for e in table:
        if e.hip and e.hip != e.cuda and e.support != "unsupported":
            rules.append((e.cuda, re.compile(r"\b" + re.escape(e.cuda) + r"\b"), e.hip))
    return rules


def naive_hipify(text: str, rules: list[tuple[str, re.Pattern[str], str]]) -> str:
    # NOTE: the substring test skips absent names at C speed, as Perl's regex engine does by itself for a
    # literal pattern (Python's cannot see the literal behind \b and would scan every position).
    for cuda_name, pattern, hip_name in rules:
        if cuda_name in text:
            text = pattern.sub(hip_name, text)
    return text


def bench_hipify(*, lines: int = LINES, peer_lines: int = PEER_LINES, repeats: int = 3) -> BenchResult:
    """One row: strata.hip.hipify lines/s on the big input vs the naive re.sub loop over the same table."""
    result = BenchResult(
        name=f"hipify ({lines // 1000}k lines)",
        description="CUDA -> HIP source translation of the test corpus repeated, lines per second",
        target=NO_TARGET,
        strata_unit="lines/s",
        peer_name="naive re.sub loop",
        ratio_def="peer/strata",
    )
    try:
        with strata_step("hipify", "import"):
            mod = importlib.import_module("strata.hip.hipify")
            lexer = importlib.import_module("strata.hip.hipify_lexer")
            table = mod.load_table()
        used, text = build_input(lines)
        n_lines = text.count("\n")
        log(f"[hipify] strata.hip.hipify on {n_lines} lines ({len(text) / 1e6:.1f} MB), best of {repeats}")
        with strata_step("hipify", "translate"):
            best, times = best_of(lambda: mod.hipify(text), repeats)
            out, report = mod.hipify(text)
            per_file = [mod.hipify(t) for t in dict.fromkeys(used)]
    except StrataUnavailable as e:
        result.add_note(str(e))
        return result
    by_text = {t: r for t, r in zip(dict.fromkeys(used), per_file)}
    want = "".join(by_text[t][0] for t in used)
    result.correct = out == want and report.converted == sum(by_text[t][1].converted for t in used)

    rules = naive_translator(table)
    _, peer_text = build_input(min(peer_lines, lines))
    peer_n = peer_text.count("\n")
    peer_repeats = max(1, min(repeats, 2))  # the peer is slow; two runs are enough to take the better
    log(f"[hipify] naive re.sub loop ({len(rules)} patterns) on {peer_n} lines, best of {peer_repeats}")
    peer_sub_best, peer_times = best_of(lambda: naive_hipify(peer_text, rules), peer_repeats, warmups=0)
    peer_best = peer_sub_best * n_lines / peer_n  # linear in the text's length: one pass per pattern
    naive_out = naive_hipify(peer_text, rules)
    text_head = peer_text
    original_non_code = [text_head[t.start : t.end] for t in lexer.scan(text_head).tokens if t.kind != "include"]
    naive_non_code = [naive_out[t.start : t.end] for t in lexer.scan(naive_out).tokens if t.kind != "include"]
    corrupted = sum(a != b for a, b in zip(original_non_code, naive_non_code)) + abs(
        len(original_non_code) - len(naive_non_code))

    result.strata_value = n_lines / best
    result.peer_value = peer_best
    result.ratio = peer_best / best
    result.details = {
        "lines": n_lines, "bytes": len(text), "files": len(used), "table_rows": len(table),
        "strata_s": times, "strata_lines_per_s": n_lines / best, "converted_refs": report.converted,
        "warnings": len(report.warnings), "peer_s": peer_times, "peer_lines_per_s": n_lines / peer_best,
        "peer_patterns": len(rules), "peer_comments_or_literals_rewritten": corrupted,
    }
    result.add_note(f"strata {n_lines / best:,.0f} lines/s ({best:.3f} s for {n_lines} lines); naive "
                    f"{n_lines / peer_best:,.0f} lines/s (timed on {peer_n} lines, scaled linearly), which also "
                    f"rewrote {corrupted} comments/string literals in those lines and no launches")
    if not result.correct:
        result.add_note("the big input's translation differs from the per-file translations concatenated")
    return judge(result, True)  # no target: PASS means a figure was produced and the translation checked out


def main() -> int:
    parser = argparse.ArgumentParser(description="hipify throughput (lines/s), strata vs a naive re.sub loop.")
    parser.add_argument("--lines", type=int, default=LINES, help="input size in lines (the corpus, repeated)")
    parser.add_argument("--peer-lines", type=int, default=PEER_LINES, help="lines the naive peer is timed on")
    parser.add_argument("--repeat", type=int, default=3, help="timed strata runs (best reported)")
    args = parser.parse_args()
    t0 = time.perf_counter()
    result = bench_hipify(lines=args.lines, peer_lines=args.peer_lines, repeats=args.repeat)
    print(format_table([result]))
    log(f"[hipify] done in {time.perf_counter() - t0:.1f} s")
    return 0 if result.status == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
