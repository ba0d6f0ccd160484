#!/usr/bin/env bash
# Claim a public repository as a source of the wide corpus, atomically (flock): exits 0 and
# records "OWNER/NAME<TAB>WHO<TAB>UTC time" in CLAIMS.tsv when nobody holds it, 1 when it is
# taken or excluded. Usage: benchmarks/wide/claim.sh OWNER/NAME WHO
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="${1:?OWNER/NAME}"; who="${2:?who claims it}"
lower="$(printf '%s' "$repo" | tr 'A-Z' 'a-z')"
exec 9>"$here/.claims.lock"
flock 9
touch "$here/CLAIMS.tsv"
if grep -qixF "$lower" "$here/EXCLUDED.txt"; then echo "excluded: $repo" >&2; exit 1; fi
if cut -f1 "$here/CLAIMS.tsv" | tr 'A-Z' 'a-z' | grep -qxF "$lower"; then
  echo "taken: $(grep -i "^$repo	" "$here/CLAIMS.tsv")" >&2; exit 1
fi
printf '%s\t%s\t%s\n' "$repo" "$who" "$(date -u +%FT%TZ)" >> "$here/CLAIMS.tsv"
echo "claimed: $repo"
