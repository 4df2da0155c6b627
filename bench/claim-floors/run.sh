#!/usr/bin/env bash
# Same-run floors of a keyed claim (R50) and of a fan-out's tally (R45) against a plain one-step
# drain, with pgbench, alternating: bench/claim-floors/run.sh [rounds] [clients] [cases...],
# cases plain, keyed, tally, shards (loop.sql with a case's grant-*.sql and end-*.sql).
#   bench/claim-floors/run.sh 6 10 plain keyed          # W2 1×10 against keyed W2
#   bench/claim-floors/run.sh 6 20 plain tally shards   # W2 2×10 against W6's children
# Needs DATABASE_URL and pgbench (Debian: postgresql-client or the server's bin folder). Each
# run drains 20,000 of 40,000 pre-submitted tasks; prints tasks/s per case and each ratio to the
# first case of its round.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${1:-6}
clients=${2:-10}
shift 2 || true
cases=("${@:-plain keyed}")
read -r -a cases <<<"${cases[*]}"
pgbench=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1)
url=${DATABASE_URL:?set DATABASE_URL}
script=$(mktemp)
trap 'rm -f "$script"' EXIT
psql -q "$url" -f "$here/schema.sql" 2>/dev/null
per_client=$((20000 / 10 / clients))
for round in $(seq "$rounds"); do
  line="round $round:"
  base=
  for case in "${cases[@]}"; do
    keyed=false
    [ "$case" = keyed ] && keyed=true
    psql -q "$url" -v n=40000 -v keyed=$keyed -f "$here/fill.sql"
    grant=all end=plain
    case $case in keyed) grant=keyed ;; tally | shards) end=$case ;; esac
    sed -e "/^-- GRANT\$/{r $here/grant-$grant.sql" -e 'd}' -e "/^-- END\$/{r $here/end-$end.sql" -e 'd}' \
      "$here/loop.sql" >"$script"
    tps=$("$pgbench" -n -M prepared -c "$clients" -j 2 -t "$per_client" -f "$script" "$url" 2>&1 |
      awk '/^tps/ { printf "%.0f", $3 * 10 }')
    base=${base:-$tps}
    line="$line $case $tps/s ($(awk -v a="$tps" -v b="$base" 'BEGIN { printf "%.2f", a / b }')×)"
  done
  echo "$line"
done
psql -q "$url" -c 'drop table kf_tasks, kf_workflows, kf_transitions, kf_keys, kf_tally, kf_shards'
