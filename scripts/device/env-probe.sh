#!/usr/bin/env bash
# Prints what a calibration's provenance needs (device, driver, clocks, power limit, library
# versions) and exports LD_LIBRARY_PATH so a meshplan built elsewhere finds CUDA's libraries.
# Source it on the GPU machine: `. scripts/device/env-probe.sh`. Reads only; changes no setting.
# Also defines what the device scripts share: `python_env`, a prefix that runs a command with the
# library path as it was before this export (PyTorch brings its own CUDA libraries), and `stamp`,
# a timestamped progress line.
python_env=(env "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}")
stamp() { echo "== $(date -u +%H:%M:%S) $*"; }
cuda_lib_dirs() {
  for lib in libcudart.so.13 libcublasLt.so.13 libnccl.so.2; do
    p=$(ldconfig -p 2>/dev/null | awk -v l="$lib" '$1==l {print $NF; exit}')
    [ -z "$p" ] && p=$(find /usr/local /opt /usr/lib -name "$lib" 2>/dev/null | head -1)
    [ -n "$p" ] && dirname "$(readlink -f "$p")"
  done | sort -u | paste -sd:
}
export LD_LIBRARY_PATH="$(cuda_lib_dirs)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi --query-gpu=name,driver_version,pci.bus_id,power.limit,power.max_limit,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,temperature.gpu,persistence_mode,compute_mode --format=csv
nvidia-smi -q | grep -iE "product name|vbios|ecc mode|current   |clocks event|throttle" | head -20
command -v nvcc >/dev/null && nvcc --version | tail -1
python3 - <<'PY' 2>/dev/null
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
      "nccl", ".".join(map(str, torch.cuda.nccl.version())))
PY
