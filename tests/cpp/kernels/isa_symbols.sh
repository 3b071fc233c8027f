#!/usr/bin/env bash
# Checks that the objects compiled for AVX2 / AVX-512 (src/kernels/isa/, see src/kernels/isa.h) define
# no global or weak symbol outside their own namespace. An inline function or template instantiated
# there with external linkage (a std:: helper, say) would be merged by the linker with the baseline
# copies, and code that runs on every CPU could end up calling AVX-512 instructions.
# Usage: isa_symbols.sh libkerascpp_kernels.a
set -euo pipefail
nm -C --defined-only "$1" | awk '
  function flush(   i) {
    if (isa == "") return
    checked++
    for (i = 0; i < n; i++)
      if (index(syms[i], "kerascpp::kernels::" isa "::") == 0) { print member " (" isa "): " syms[i]; bad = 1 }
  }
  /^$/ { next }
  /:$/ { flush(); member = $0; n = 0; isa = ""; next }
  {
    name = substr($0, index($0, $3))
    if (match(name, /^kerascpp::kernels::(avx2|avx512)::/)) isa = substr(name, 20, RLENGTH - 21)
    if ($2 ~ /^[A-Z]$/ || $2 ~ /^[uvw]$/) syms[n++] = $2 " " name
  }
  END {
    flush()
    if (checked == 0) { print "no AVX2 / AVX-512 objects found in the archive"; exit 1 }
    if (!bad) print checked " AVX2 / AVX-512 objects define global symbols in their own namespace only"
    exit bad
  }'
