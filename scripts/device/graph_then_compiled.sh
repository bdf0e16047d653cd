# Sourced by the serve-step scripts (measure-serve-steps.sh, measure-tp-rank-steps.sh,
# measure-mixed-steps.sh): runs measure_serve_step.py over every configuration, the graph build of
# each step first (a third of TIME_S at most), then the compiled build until TIME_S runs out.
#   graph_then_compiled PREFIX [EXTRA_ARGS...]
# reads the array `configs` (--config values), OUT, TIME_S and `here` (the scripts' folder), and
# writes $OUT/PREFIX-{graph,compiled}.{json,log}; EXTRA_ARGS go to both runs.
graph_then_compiled() {
  local prefix=$1 c start left
  shift
  local args=()
  for c in "${configs[@]}"; do args+=(--config "$c"); done
  start=$(date +%s)
  timeout $((TIME_S / 3)) python3 "$here/measure_serve_step.py" --modes graph "$@" \
    "${args[@]}" --out "$OUT/$prefix-graph.json" 2>&1 | tee "$OUT/$prefix-graph.log"
  left=$((TIME_S - ($(date +%s) - start)))
  timeout "$left" python3 "$here/measure_serve_step.py" --modes compiled "$@" \
    "${args[@]}" --out "$OUT/$prefix-compiled.json" 2>&1 | tee "$OUT/$prefix-compiled.log"
}
