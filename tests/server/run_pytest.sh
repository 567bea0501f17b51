#!/bin/sh
# ctest's wrapper of one pytest file of the server tests: exit 77 (ctest:
# skipped) when pytest, pymemcache or meta-memcache is missing.
if ! python3 -c 'import pytest, pymemcache, meta_memcache' 2>/dev/null; then
  echo "pytest, pymemcache or meta-memcache missing (pip install pytest pymemcache meta-memcache): skipped"
  exit 77
fi
cd "$(dirname "$1")" && exec python3 -m pytest -q -p no:cacheprovider "$@"
