#!/usr/bin/env bash
# Rebuild the checked-in gfx942 code objects and their llvm-objdump listings from the .hip sources
# (needs clang-19 and llvm-19: `make amd`). The tests use the checked-in files, so the loader, decoder
# and executor tests run without clang.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
inc=../../../src/strata/hip/include_amd
for src in *.hip; do
    k=${src%.hip}
    clang-19 -x hip --offload-arch=gfx942 --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O3 \
        -I"$inc" "$src" -o "$k.co"
    llvm-objdump-19 -d --mcpu=gfx942 "$k.co" | grep -P '^\t' | sed -E 's#^\t(.*\S)\s*// ([0-9A-F]+):.*#\2 \1#' > "$k.s"
done
