#!/usr/bin/env bash
# Calibrates one GPU node: GEMM (cuBLASLt), HBM and NCCL collectives over all its GPUs, in one
# process (ncclCommInitAll). Usage:
#   scripts/calibrate-node.sh [--quick] [--model models/llama3-70b.yaml --tp 8] [--out FILE]
# Extra arguments go to `meshplan calibrate`. Default output: profiles/<host>-<date>.yaml.
# MESHPLAN (path to the binary) defaults to build/meshplan, built with `make build` if absent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
meshplan="${MESHPLAN:-$root/build/meshplan}"
if [[ ! -x "$meshplan" ]]; then
  echo "calibrate-node: building meshplan (make build)" >&2
  make -C "$root" build >&2
fi
command -v nvidia-smi >/dev/null && nvidia-smi -L >&2 || echo "calibrate-node: nvidia-smi not found" >&2
out="$root/profiles/$(hostname -s)-$(date +%Y%m%d).yaml"
args=("$@")
for a in "$@"; do [[ "$a" == "--out" ]] && out=""; done
[[ -n "$out" ]] && args+=(--out "$out")
exec "$meshplan" calibrate --backend cuda "${args[@]}"
