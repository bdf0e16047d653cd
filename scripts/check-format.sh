#!/usr/bin/env bash
# Checks C++ formatting against the repository's .clang-format without changing any file.
#   scripts/check-format.sh [FILE...]
# With FILEs, checks those (*.cc, *.h and *.cu; others are skipped); with none, every tracked
# *.cc, *.h and *.cu file under the source folders. Prints clang-format's diagnostics and exits 1
# when a file is not formatted, 0 when all are, 2 when clang-format is missing.
# Fix a file with: clang-format -i FILE (CLANG_FORMAT names another binary).
set -euo pipefail
cd "$(dirname "$0")/.."

CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" > /dev/null 2>&1; then
  echo "check-format: $CLANG_FORMAT not found (install clang-format, or set CLANG_FORMAT)" >&2
  exit 2
fi

SOURCE_FOLDERS=(core simulator calibrate planner launchers checks reports serving cli tests)

files=()
if [ "$#" -gt 0 ]; then
  for f in "$@"; do
    case "$f" in
      *.cc | *.h | *.cu) files+=("$f") ;;
    esac
  done
else
  patterns=()
  for d in "${SOURCE_FOLDERS[@]}"; do
    patterns+=("$d/*.cc" "$d/*.h" "$d/*.cu")
  done
  mapfile -t files < <(git ls-files -- "${patterns[@]}")
fi

if [ "${#files[@]}" -eq 0 ]; then
  exit 0
fi
status=0
"$CLANG_FORMAT" --style=file --dry-run -Werror "${files[@]}" || status=1
if [ "$status" -ne 0 ]; then
  echo "check-format: files above differ from .clang-format; run clang-format -i on them" >&2
fi
exit "$status"
