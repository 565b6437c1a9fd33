#!/usr/bin/env bash
#
# bench-pairs.sh runs BENCH_PAIRS pairs of make bench, one run without budgets and one with a
# VideoBudget in every namespace, in ABBA order (pair 1 unguarded first, pair 2 guarded first,
# ...), each run in BENCH_OUT/pair-K-{unguarded,guarded}, then summarises them
# (hack/benchpairs): a ratio of API server CPU read from one pair is not one to count on.
# Every other BENCH_* variable is passed to make bench as it is.
set -euo pipefail

pairs="${BENCH_PAIRS:-3}"
out="${BENCH_OUT:?BENCH_OUT names the directory of the pairs}"
make="${MAKE:-make}"
mkdir -p "$out"

run() { # run K guarded|unguarded
	local dir="$out/pair-$1-$2" budget=false
	[[ "$2" == guarded ]] && budget=true
	rm -rf "$dir"
	echo "bench-pairs: pair $1, $2 ($(date -u +%H:%M:%S))" >&2
	"$make" --no-print-directory bench BENCH_BUDGET="$budget" BENCH_OUT="$dir" BENCH_LABEL="pair $1 $2"
}

for ((k = 1; k <= pairs; k++)); do
	if ((k % 2 == 1)); then
		order=(unguarded guarded)
	else
		order=(guarded unguarded)
	fi
	echo "${order[0]} first" >"$out/pair-$k-order"
	run "$k" "${order[0]}"
	run "$k" "${order[1]}"
done
go run ./hack/benchpairs "$out"
