#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time, each from a seed corpus of shipped files.
#   scripts/run-fuzzers.sh BUILD_DIR SECONDS_PER_TARGET
# The working corpus lives in BUILD_DIR/fuzz-corpus/<target> (kept between runs); a crash,
# leak, timeout or out-of-memory input is saved under BUILD_DIR/fuzz-artifacts/. Prints the
# executions per target and exits 1 when any target failed.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?build folder}
seconds=${2:?seconds per target}

# target → seed files (globs, from the repository root). Profiles: the published ones and an
# excerpt of a measured one; the measured profiles themselves (0.5 MB each) made every mutation
# a 0.5 MB parse (275-550 executions in 20 s instead of about 10,000).
declare -A seeds=(
  [model_yaml]="models/*.yaml"
  [cluster_yaml]="topologies/*.yaml"
  [profile_yaml]="profiles/*-published.yaml profiles/example.yaml fuzz/corpus/profile/*"
  [hf_config]="tests/data/hf/*.json"
  [layout]="fuzz/corpus/layout/*"
  [nccl_tests]="tests/data/nccl-tests/*"
  [regress]="tests/regress/*.yaml"
  [validation_runs]="tests/data/published_runs*.yaml"
  [serving_layout]="fuzz/corpus/serving_layout/*"
  [request_trace]="tests/data/traces/*.csv fuzz/corpus/request_trace/*"
  [yaml_documents]="models/*.yaml topologies/*.yaml profiles/*-published.yaml tests/data/hostile/* fuzz/corpus/yaml_documents/*"
  [yaml_blocks]="profiles/*-published.yaml profiles/example.yaml fuzz/corpus/yaml_blocks/*"
)

status=0
summary=""
for target in model_yaml cluster_yaml profile_yaml hf_config layout nccl_tests regress validation_runs \
  serving_layout request_trace yaml_documents yaml_blocks; do
  corpus="$build/fuzz-corpus/$target"
  artifacts="$build/fuzz-artifacts"
  mkdir -p "$corpus" "$artifacts"
  # shellcheck disable=SC2086
  cp ${seeds[$target]} "$corpus/"
  log="$build/fuzz-artifacts/$target.log"
  "$build/fuzz/${target}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$target-" "$corpus" > "$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    status=1
    summary+=$(printf '%-16s FAILED (exit %d, %s executions; see %s)\n' "$target" "$rc" "${runs:-?}" "$log")
  else
    summary+=$(printf '%-16s %12s executions in %ss, 0 crashes\n' "$target" "${runs:-?}" "$seconds")
  fi
  summary+=$'\n'
done
printf 'fuzz:\n%s' "$summary"
exit $status
