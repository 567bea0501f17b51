#!/bin/sh
# ctest's wrapper of one pytest file of the server tests: exit 77 (ctest:
# skipped) when pytest or pymemcache is missing.
if ! python3 -c 'import pytest, pymemcache' 2>/dev/null; then
  echo "pytest or pymemcache missing (pip install pytest pymemcache): skipped"
  exit 77
fi
cd "$(dirname "$1")" && exec python3 -m pytest -q -p no:cacheprovider "$@"
