#!/usr/bin/env bash
# make fuzz: builds the libFuzzer harnesses of fuzz/ with clang under ASan + UBSan (build-fuzz/), seeds
# each corpus from the real fixtures, and runs each harness for SECONDS (or RUNS executions), with its
# dictionary. Crashes land in build-fuzz/crashes/<harness>/: each becomes a regression input
# (fuzz/regressions/<harness>/) once fixed. Prints executions, coverage and crashes per harness.
# FUZZ_KEEP_GOING=1 runs libFuzzer's fork mode, which goes on after a crash and collects them all.
# Usage: scripts/fuzz.sh [SECONDS] [RUNS] [harness ...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
RUNS=${2:-}
if [ $# -gt 2 ]; then HARNESSES=("${@:3}"); else HARNESSES=(hdf5 zip npy config json load_model); fi
B=build-fuzz

CC=clang CXX=clang++ cmake -S . -B $B -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKERASCPP_FUZZ=ON \
  -DKERASCPP_SANITIZE=address -DKERASCPP_TESTS=OFF > /dev/null
cmake --build $B -j"$(nproc)" --target "${HARNESSES[@]/#/fuzz_}"

# Seeds: every fixture file of the harness's kind, and the members of the .keras archives.
seed() {
  local name=$1 dir=$B/corpus/$1
  [ -d "$dir" ] && return
  mkdir -p "$dir"
  case $name in
    hdf5) find tests/fixtures -name '*.h5' -size -2M -exec cp -t "$dir" --backup=numbered {} + ;
          for k in $(find tests/fixtures -name '*.keras' -size -2M); do
            unzip -p "$k" model.weights.h5 > "$dir/$(echo "$k" | tr / _).weights.h5" 2>/dev/null || true; done ;;
    zip|load_model) find tests/fixtures -name '*.keras' -size -2M -exec cp -t "$dir" --backup=numbered {} + ;
          [ "$name" = load_model ] && find tests/fixtures -name 'model.h5' -size -2M -exec cp -t "$dir" --backup=numbered {} + ;;
    npy) find tests/fixtures -name '*.npy' -size -256k -exec cp -t "$dir" --backup=numbered {} + ;;
    config|json) for k in $(find tests/fixtures -name 'model.keras' -size -2M); do
              unzip -p "$k" config.json > "$dir/$(echo "$k" | tr / _).json" 2>/dev/null || true; done
            find tests/fixtures -name 'config.json' -exec cp -t "$dir" --backup=numbered {} + ;;
  esac
  cp fuzz/regressions/"$name"/* "$dir"/ 2>/dev/null || true
}

dict_of() {
  case $1 in hdf5) echo fuzz/dicts/hdf5.dict ;; zip) echo fuzz/dicts/zip.dict ;; npy) echo fuzz/dicts/npy.dict ;;
    config|json) echo fuzz/dicts/json.dict ;; load_model) echo fuzz/dicts/load_model.dict ;; esac
}

summary=()
for h in "${HARNESSES[@]}"; do
  seed "$h"
  mkdir -p $B/crashes/"$h" $B/logs
  log=$B/logs/$h.log
  limit=(-max_total_time="$SECONDS_EACH") what="$SECONDS_EACH s"
  if [ -n "$RUNS" ]; then limit=(-runs="$RUNS") what="$RUNS runs"; fi
  if [ -n "${FUZZ_KEEP_GOING:-}" ]; then limit+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1); fi
  echo "== fuzz_$h ($what, corpus $(ls $B/corpus/"$h" | wc -l) files)"
  set +e
  ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    $B/fuzz_"$h" "${limit[@]}" -dict="$(dict_of "$h")" -rss_limit_mb=2560 -timeout=20 -max_len=4194304 \
    -print_final_stats=1 -artifact_prefix=$B/crashes/"$h"/ $B/corpus/"$h" > "$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' ||
          grep -oE '^#[0-9]+: cov' "$log" | tail -1 | grep -oE '[0-9]+' || echo '?')  # fork mode: its last line
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)  # none when a seed crashed at once
  crashes=$(find $B/crashes/"$h" -maxdepth 1 -type f | wc -l)
  summary+=("$h: rc=$rc executions=$execs $cov crashes=$crashes (log $log)")
  echo "${summary[-1]}"
done
printf '%s\n' "" "Summary:" "${summary[@]}"
