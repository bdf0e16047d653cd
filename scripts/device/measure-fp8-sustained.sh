#!/usr/bin/env bash
# FP8 sustained GEMM throughput, which the 2026-11-23 (H100) and 2026-11-26 (H200) calibrations
# did not measure (calibrate ran its 30 s back-to-back run in bf16 only until 0d367df): the grid
# sweep in bf16 and fp8 with 30 s of 8192^3 back to back in each dtype (calibrate's own
# sustained run; its fp8 figure becomes gemm.fp8.sustained_tflops), then three fp8 shapes back to
# back through torch._scaled_mm (measure_sustained.py --dtype fp8), to see whether fp8, like
# bf16, settles at one ceiling whatever the shape. About 2 minutes.
# MESHPLAN: the meshplan executable with libmeshplan_cuda.so beside it (scripts/device/pack.sh);
# OUT: where results go.
set -uo pipefail
here=$(dirname "$0")
MESHPLAN=${MESHPLAN:-build/meshplan}
OUT=${OUT:-calibration-out}
mkdir -p "$OUT"
. "$here/env-probe.sh" > "$OUT/env.txt" 2>&1
stamp "calibrate: grid GEMMs in bf16 and fp8, 30 s sustained in each"
timeout 150 "$MESHPLAN" calibrate --backend cuda --gemm --dtypes bf16,fp8 \
  --sustained-seconds 30 --out "$OUT/sustained-gemm.yaml" 2>&1 | tail -3
echo "calibrate rc=${PIPESTATUS[0]}"
grep -n "sustained" "$OUT/sustained-gemm.yaml" | cut -c1-220
stamp "fp8 shapes back to back"
timeout 60 "${python_env[@]}" python3 "$here/measure_sustained.py" --dtype fp8 --seconds 12 --out "$OUT/sustained-fp8.json"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv >> "$OUT/env.txt"
stamp "done"
