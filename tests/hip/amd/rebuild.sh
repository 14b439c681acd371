#!/usr/bin/env bash
# Rebuild the checked-in code objects and their llvm-objdump listings from the .hip sources (needs clang-19
# and llvm-19: `make amd`): gfx942 (MI300X) here, gfx90a (MI250X) in gfx90a/, and subdword.hip also for
# gfx942:sramecc- in d16/ (without SRAM ECC clang keeps half-register d16 loads, which preserve the other half). The tests use the checked-in
# files, so the loader, decoder and executor tests run without clang. mfma.hip uses gfx942-only builtins
# and mfma90a.hip gfx90a-only ones.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
inc=../../../src/strata/hip/include_amd
build() {  # arch (with target features), source, output directory
    local k=${2%.hip}
    clang-19 -x hip --offload-arch="$1" --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -mprintf-kind=buffered -O3 \
        -I"$inc" "$2" -o "$3/$k.co"
    llvm-objdump-19 -d --mcpu="${1%%:*}" "$3/$k.co" | grep -P '^\t' | sed -E 's#^\t(.*\S)\s*// ([0-9A-F]+):.*#\2 \1#' \
        > "$3/$k.s"
}
for src in *.hip; do
    [ "$src" = mfma90a.hip ] || build gfx942 "$src" .
    [ "$src" = mfma.hip ] || build gfx90a "$src" gfx90a
done
build gfx942:sramecc- subdword.hip d16
