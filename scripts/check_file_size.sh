#!/usr/bin/env bash
# Fails when a source file passes 800 lines (design.md §4: small files; 800 is the hard ceiling).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
while IFS= read -r f; do
  n=$(wc -l < "$f")
  if [ "$n" -gt 800 ]; then echo "error: $f has $n lines (limit 800)"; status=1; fi
done < <(git ls-files -co --exclude-standard -- '*.h' '*.hpp' '*.cpp' '*.cc' '*.inc' '*.py' '*.cmake' 'CMakeLists.txt')
[ $status -eq 0 ] && echo "file sizes ok (every source file <= 800 lines)"
exit $status
