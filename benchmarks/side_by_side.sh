#!/usr/bin/env bash
# Before/after on one machine in one run: bench_idx, bench_list and bench_storage of two catalog
# trees (checkouts or `git worktree add --detach DIR REV`), alternating BEFORE and AFTER ROUNDS
# times. Each tree runs its own scripts on its own code (PYTHONPATH=<tree>; bench_list through
# --root); one output file per benchmark, tree and round in OUT.
#
#   bash benchmarks/side_by_side.sh BEFORE AFTER [OUT] [ROUNDS]
set -euo pipefail
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
out=${3:-side_by_side}
rounds=${4:-2}
py=${PYTHON:-python}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
for round in $(seq 1 "$rounds"); do
  for tree in "$before" "$after"; do
    tag=$([ "$tree" = "$before" ] && echo before || echo after)-$round
    (cd "$tree" && PYTHONPATH=$tree $py benchmarks/bench_idx.py --repeat 3 --imports 9 >"$out/idx-$tag.txt" 2>&1)
    (cd "$here" && $py benchmarks/bench_list.py --root "$tree" --runs 9 >"$out/list-$tag.txt" 2>&1)
    (cd "$tree" && PYTHONPATH=$tree $py benchmarks/bench_storage.py --repeat 3 >"$out/storage-$tag.txt" 2>&1)
    echo "$tag done $(date +%T)"
  done
done
