"""Where the device scripts put what they measured (imported from beside them): standard output
for '-', else the file, written whole (a temporary file renamed over it), so a run cut short at
its limit leaves the last complete version."""
import os
import sys


def emit(text, out):
    if out == "-":
        sys.stdout.write(text)
        return
    with open(out + ".tmp", "w") as f:
        f.write(text)
    os.replace(out + ".tmp", out)
