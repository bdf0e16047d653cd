"""Where the device scripts put what they measured (imported from beside them): standard output
for '-', else the file, written whole (a temporary file renamed over it), so a run cut short at
its limit leaves the last complete version."""
import json
import os
import sys


def emit(text, out):
    if out == "-":
        sys.stdout.write(text)
        return
    with open(out + ".tmp", "w") as f:
        f.write(text)
    os.replace(out + ".tmp", out)


def emit_results(results, out, final=False):
    """Writes the measured `results` with the device's name and PyTorch's version: to the file
    `out` after every measurement, or once to standard output at the end (`final`) for '-'."""
    import torch  # the device scripts' environment; this module's other users need none
    doc = json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "results": results}, indent=1)
    if out != "-" and not final:
        emit(doc, out)
    elif out == "-" and final:
        emit(doc + "\n", "-")
