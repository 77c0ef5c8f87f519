#!/usr/bin/env bash
# Issue 22's registry figure: a redis-server with N fake session ids in csv-wave:sessions
# (scored ten minutes ahead, so that none is pruned meanwhile), one `csv-wave worker` without
# --session-id; prints Redis's client count before the worker and once it is steady (no
# change for 5 s), and how many fake sessions the worker served. Before issue 22, 400 ids
# took Redis from 1 to 1,203 clients.
# Usage: CSV_WAVE_SECRET=… scripts/bench/bullmq-registry.sh [ids=400] [worker flags…]
# (e.g. `env -u CSV_WAVE_SECRET scripts/bench/bullmq-registry.sh 400 --insecure-no-secret`)
# BIN=/abs/path/to/other/dist/cli/bin.js measures another build's worker.
set -euo pipefail
cd "$(dirname "$0")/../.."
IDS=${1:-400}
shift || true
BIN=${BIN:-$PWD/dist/cli/bin.js}
WORK=$(mktemp -d /tmp/bullmq-registry-XXXXXX)
PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
redis-server --port "$PORT" --bind 127.0.0.1 --dir "$WORK" --save '' --appendonly no > "$WORK/redis.log" 2>&1 &
REDIS=$!
WORKER=
trap '[ -n "$WORKER" ] && kill -9 $WORKER 2>/dev/null; kill $REDIS 2>/dev/null; rm -rf "$WORK"' EXIT
until grep -q 'Ready to accept' "$WORK/redis.log"; do sleep 0.1; done
now=$(redis-cli -p "$PORT" time | head -1)
for i in $(seq 1 "$IDS"); do echo "ZADD csv-wave:sessions $(( (now + 600) * 1000 )) fake-$i"; done | redis-cli -p "$PORT" > /dev/null
before=$(redis-cli -p "$PORT" client list | wc -l)
node "$BIN" worker --redis "redis://127.0.0.1:$PORT" "$@" > "$WORK/worker.log" 2>&1 &
WORKER=$!
last=-1; same=0
for _ in $(seq 1 240); do
  sleep 0.5
  count=$(redis-cli -p "$PORT" client list | wc -l)
  if [ "$count" = "$last" ]; then same=$((same + 1)); else same=0; fi
  last=$count
  [ $same -ge 10 ] && break
done
printf '%d fake ids: Redis clients %d before the worker, %d with it; %d fake sessions served; load average %s\n' \
  "$IDS" "$before" "$last" "$(grep -c 'taking jobs of csv-wave-fake' "$WORK/worker.log" || true)" "$(cut -d' ' -f1-3 /proc/loadavg)"
