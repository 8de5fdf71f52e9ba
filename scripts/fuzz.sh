#!/usr/bin/env bash
# Builds and runs Phantora's libFuzzer targets (tests/fuzz, docs/reliability.md "Fuzzing").
#
#   scripts/fuzz.sh build                      configure and build them with clang (-j2)
#   scripts/fuzz.sh run [SECONDS] [NAME...]    build, then fuzz each for SECONDS (default 60)
#   scripts/fuzz.sh smoke BINDIR WORKDIR NAME  replay NAME's seeds, no mutation (the ctest)
#
# NAME: protocol, topology, kernel_times, kernel_db_csv (default: all). The build goes to
# $PHANTORA_FUZZ_BUILD (default build-fuzz); corpora grow in $PHANTORA_FUZZ_BUILD/corpus/NAME
# (seeded from tests/fuzz/corpus/NAME and the repository's data files); crashes land in
# $PHANTORA_FUZZ_BUILD/findings/NAME/. `run` ends with a table: executions, corpus size,
# coverage and findings per fuzzer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PHANTORA_FUZZ_BUILD:-$root/build-fuzz}
all=(protocol topology kernel_times kernel_db_csv)

# Seed directories of each fuzzer: its committed corpus, and data files the project ships.
seeds() {
  local dirs=("$root/tests/fuzz/corpus/$1")
  case $1 in
    topology) dirs+=("$root/netmodel/data" "$root/tests/nccl/topologies") ;;
    kernel_times) dirs+=("$root/tests/integration/programs/times.csv"
                         "$root/tests/reliability/programs/times.csv") ;;
  esac
  for d in "${dirs[@]}"; do [[ -e $d ]] && echo "$d"; done
}

# fuzz BINDIR WORKDIR NAME SECONDS: runs fuzz_NAME, its new inputs in WORKDIR/corpus/NAME.
fuzz() {
  local bindir=$1 work=$2 name=$3 seconds=$4
  mkdir -p "$work/corpus/$name" "$work/findings/$name"
  local inputs=("$work/corpus/$name")
  local s
  while read -r s; do
    if [[ -f $s ]]; then cp "$s" "$work/corpus/$name/"; else inputs+=("$s"); fi
  done < <(seeds "$name")
  local limit=(-max_total_time="$seconds")
  [[ $seconds -gt 0 ]] || limit=(-runs=0)  # replay the inputs only: deterministic
  "$bindir/fuzz_$name" "${limit[@]}" -rss_limit_mb=4096 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$work/findings/$name/" "${inputs[@]}"
}

build_fuzzers() {
  command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt-get install clang)" >&2; exit 2; }
  cmake -S "$root/tests/fuzz/project" -B "$build" -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ >/dev/null
  cmake --build "$build" -j2
}

case ${1:-run} in
  build)
    build_fuzzers
    ;;
  smoke)
    fuzz "$2" "$3" "$4" 0
    ;;
  run)
    seconds=${2:-60}
    names=("${@:3}")
    [[ ${#names[@]} -gt 0 ]] || names=("${all[@]}")
    build_fuzzers
    summary=()
    for n in "${names[@]}"; do
      log="$build/fuzz_$n.log"
      fuzz "$build" "$build" "$n" "$seconds" 2>&1 | tee "$log" | grep -E "^(#[0-9]+ +(INITED|DONE)|==[0-9]+==|SUMMARY)" || true
      execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
      cov=$(grep -oE "cov: [0-9]+" "$log" | tail -1 | cut -d' ' -f2)
      units=$(ls "$build/corpus/$n" | wc -l)
      found=$(ls "$build/findings/$n" | wc -l)
      summary+=("$(printf '%-14s %12s %8s %8s %9s' "$n" "${execs:-?}" "${units}" "${cov:-?}" "$found")")
    done
    printf '%-14s %12s %8s %8s %9s\n' fuzzer executions corpus coverage findings
    printf '%s\n' "${summary[@]}"
    ;;
  *)
    sed -n '2,12p' "$0" >&2
    exit 2
    ;;
esac
