#!/usr/bin/env bash
# Checks that a binary built by the default (portable) build runs on any x86-64-v2 CPU: no function
# outside the per-instruction-set kernels (namespaces kerascpp::kernels::avx2 / ::avx512, chosen at
# run time, see src/kernels/isa.h) contains an AVX (VEX/EVEX: every mnemonic starting with "v", and
# the AVX-512 mask instructions "k..."), BMI, LZCNT or MOVBE instruction, and those kernels are there.
# On a stripped binary (the wheel's module) functions are told apart by the symbols left, so the check
# is coarser there; the CLI (cli_is_portable) keeps every symbol.
# Usage: check_portable_binary.sh FILE...   (executables or shared objects)
set -euo pipefail
status=0
for bin in "$@"; do
  objdump -d --no-show-raw-insn -C "$bin" | awk -v bin="$bin" '
    /^[0-9a-f]+ <.*>:$/ { fn = $0; next }
    /^ +[0-9a-f]+:\t/ {
      split($0, parts, "\t")
      mnemonic = parts[2]
      sub(/^\{[a-z0-9]+\} */, "", mnemonic)  # {vex} / {evex} encoding prefixes
      sub(/ .*/, "", mnemonic)
      if (mnemonic !~ /^[vk]/ && mnemonic !~ /^(andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx|lzcnt|movbe)$/)
        next
      if (fn ~ /kerascpp::kernels::(avx2|avx512)::/) { dispatched++; next }
      if (!(fn in bad)) order[nbad++] = fn
      bad[fn]++
    }
    END {
      for (i = 0; i < nbad && i < 20; i++) print "FAIL " bin ": " order[i] " has " bad[order[i]] " AVX/BMI instructions"
      if (nbad) { print nbad " functions of " bin " would not run on an x86-64-v2 CPU"; exit 1 }
      if (!dispatched) { print "FAIL " bin ": no AVX2 / AVX-512 kernel set found"; exit 1 }
      print "ok " bin ": AVX/BMI instructions only in the run-time-dispatched kernel sets (" dispatched ")"
    }' || status=1
done
exit $status
