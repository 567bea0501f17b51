#!/usr/bin/env bash
# The README's index table and `pmindex list` name the same indexes (the
# harness-only `null` aside): a registered index is documented, a documented
# one exists. usage: readme_indexes.sh PMINDEX README.md
set -eu
bin=$1 readme=$2
listed=$("$bin" list --json | python3 -c 'import json,sys; print("\n".join(sorted(e["name"] for e in json.load(sys.stdin)["indexes"] if e["name"] != "null")))')
# Rows of the table under "## Indexes": | `name`, `name2` | ...
documented=$(awk '/^## Indexes/{on=1; next} /^## /{on=0} on && /^\| `/' "$readme" |
             cut -d'|' -f2 | grep -o '`[^`]*`' | tr -d '`' | sort)
if [ "$listed" != "$documented" ]; then
  echo "README index table and pmindex list disagree:"
  diff <(echo "$documented") <(echo "$listed") | sed 's/^</  README only:/; s/^>/  list only:  /' | grep only
  exit 1
fi
echo "README and pmindex list agree on $(echo "$listed" | wc -l) indexes"
