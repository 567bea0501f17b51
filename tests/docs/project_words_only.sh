#!/usr/bin/env bash
# The repository speaks of the project only: no tracked text file (code,
# comments, docs, tests, results) names a development session, an issue of
# the project's tracker by number, or a path of one machine (a home or
# work directory, a named folder under /tmp). A comment says why the code is
# as it is; history is in git. usage: project_words_only.sh SOURCE_DIR
set -eu
cd "$1"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  paths=$(git ls-files)
else  # a source tree without its history (an unpacked archive)
  paths=$(find . \( -name .git -o -name build -o -name 'build-*' -o -name __pycache__ \) -prune -o \
             -type f ! -name '*.pool' -print | sed 's|^\./||')
fi
self=tests/docs/project_words_only.sh
pattern='\b[Ss]essions? [0-9]+|\b[Ii]ssues? ?#?[0-9]{1,4}\b|\bissue[0-9]+|/work/|/root/|/home/[a-z]|/tmp/[A-Za-z0-9_.-]+/'
hits=$(printf '%s\n' "$paths" | grep -v -x -F "$self" | grep -vE '\.(png|jpg|svg|pdf|pool|gz)$' |
       tr '\n' '\0' | xargs -0 -r grep -nIE "$pattern" -- 2>/dev/null || true)
if [ -n "$hits" ]; then
  echo "$(printf '%s\n' "$hits" | wc -l) lines speak of how the project was made or of one machine:"
  printf '%s\n' "$hits" | head -20 | cut -c1-200 | sed 's/^/  /'
  exit 1
fi
echo "$(printf '%s\n' "$paths" | wc -l) files, none names a session, an issue number or a machine's path"
