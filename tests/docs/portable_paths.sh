#!/usr/bin/env bash
# Every tracked path can be checked out on the file systems our users clone
# to: no character Windows forbids in a name (<>:"|?*\ and control
# characters), no name ending in a dot or a space, no reserved device name
# (CON, NUL, COM1, ...), and no two paths that differ only in case (one
# would overwrite the other on a case-insensitive file system: Windows,
# macOS by default). usage: portable_paths.sh SOURCE_DIR
set -eu
cd "$1"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  paths=$(git ls-files)
else  # a source tree without its history (an unpacked archive)
  paths=$(find . \( -name .git -o -name build -o -name 'build-*' -o -name __pycache__ \) -prune -o \
             -type f ! -name '*.pool' -print | sed 's|^\./||')  # (what .gitignore leaves out)
fi
bad=$(printf '%s\n' "$paths" | python3 -c '
import re, sys
reserved = re.compile(r"(?i)^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$")
paths = [p for p in sys.stdin.read().split("\n") if p]
seen = {}
for p in paths:
    for part in p.split("/"):
        why = None
        if re.search(r"[<>:\"|?*\\\x00-\x1f]", part): why = "a character Windows forbids"
        elif part.endswith((".", " ")): why = "ends in a dot or a space"
        elif reserved.match(part): why = "a reserved device name"
        if why:
            print(f"{p}: {why}")
            break
    low = p.lower()
    if low in seen: print(f"{p}: differs from {seen[low]} only in case")
    seen.setdefault(low, p)
')
if [ -n "$bad" ]; then
  echo "$(printf '%s\n' "$bad" | wc -l) paths cannot be checked out everywhere, e.g.:"
  printf '%s\n' "$bad" | head -10 | sed 's/^/  /'
  exit 1
fi
echo "$(printf '%s\n' "$paths" | wc -l) paths, all portable"
