#!/usr/bin/env python3
"""Regenerate the command outputs pasted in README.md from the current build.

Every fenced block in README.md whose first line is `$ meshplan ARGS` is replaced by that command's
output (build/meshplan ARGS, run from the repository root). A block with a line `…` keeps as many
lines of the output's head before it and of the output's tail after it as it has now (abridged
outputs); a block with a `...` line is left alone.

The validation table (between `| run | framework` and the line after `| all |`) is regenerated from
`meshplan validate --runs tests/data/published_runs.yaml --runs tests/data/published_runs_modern.yaml
--format md`.

Usage: scripts/update-readme-outputs.py [--check]   (--check: print what would change and exit 1
if README.md would change)
"""
import difflib
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BINARY = ROOT / "build" / "meshplan"
VALIDATE = ["validate", "--runs", "tests/data/published_runs.yaml", "--runs",
            "tests/data/published_runs_modern.yaml", "--format", "md"]


def run(args):
    # In a scratch directory that sees the repository's inputs, so a command's --out files
    # (calibrate import) do not land in the checkout.
    with tempfile.TemporaryDirectory() as scratch:
        for entry in ROOT.iterdir():
            if entry.name not in (".git", "build"):
                (pathlib.Path(scratch) / entry.name).symlink_to(entry)
        out = subprocess.run([str(BINARY)] + args, cwd=scratch, capture_output=True, text=True)
    return (out.stdout + out.stderr).rstrip("\n").split("\n")


def regenerate_block(lines):
    """lines: the block's lines without fences; the first is '$ meshplan ...'."""
    n = 1  # command lines (continued with a trailing backslash)
    while lines[n - 1].endswith("\\"):
        n += 1
    command = " ".join(line.rstrip("\\") for line in lines[:n])
    output = run(shlex.split(command[len("$ meshplan "):]))
    body = lines[n:]
    # A later `$ ` line starts another command (not meshplan's): kept as it is.
    rest = next((k for k, line in enumerate(body) if line.startswith("$ ")), len(body))
    body, kept = body[:rest], body[rest:]
    if any(line.strip() == "..." for line in body):
        return lines
    if "…" in body:
        cut = body.index("…")
        tail = len(body) - cut - 1
        output = output[:cut] + ["…"] + (output[-tail:] if tail else [])
    return lines[:n] + output + kept


def regenerate_validation(text):
    table = run(VALIDATE)
    start = text.find("| run | framework")
    end_marker = text.find("| all |", start)
    if start < 0 or end_marker < 0:
        return text
    end = text.find("\n", end_marker) + 1
    return text[:start] + "\n".join(table) + "\n" + text[end:]


def main():
    readme = ROOT / "README.md"
    text = readme.read_text()
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        if line.startswith("```") and i + 1 < len(lines) and lines[i + 1].startswith("$ meshplan "):
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            out.extend(regenerate_block(lines[i + 1:j]))
            i = j
            continue
        i += 1
    new = regenerate_validation("\n".join(out))
    if "--check" in sys.argv:
        if new != text:  # say which lines moved: a silent exit 1 reads as clean behind a pipe
            diff = difflib.unified_diff(text.split("\n"), new.split("\n"), "README.md",
                                        "README.md (regenerated)", n=0, lineterm="")
            print("\n".join(diff), file=sys.stderr)
        sys.exit(0 if new == text else 1)
    readme.write_text(new)


if __name__ == "__main__":
    main()
