#!/usr/bin/env bash
# Issue 13's coordinator-memory benchmark: a session of TASKS no-op module tasks run with
# --backend bullmq and --concurrency TASKS, and no worker, so that every task's job is
# queued in Redis at once; once all TASKS jobs wait (LLEN of the queue's wait list), the
# coordinator gets Ctrl-C (--grace 0: the jobs are removed, the tasks stay pending). Prints
# the coordinator's peak RSS (/usr/bin/time %M), its CPU times, how long queueing took,
# and Redis's used memory at that moment. Goal (issue 13): under 1 GB.
# Usage: scripts/bench/bullmq-memory.sh [tasks=100000]
# BIN=/abs/path/to/other/dist/cli/bin.js measures another build's coordinator (A/B: alternate the two).
# NODE_ARGS passes flags to the coordinator's node (e.g. "--heap-growing-percent=20").
set -euo pipefail
cd "$(dirname "$0")/../.."
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg); UPTIME_START=$(uptime)
# The coordinator and the workers need one shared secret (never in Redis): a fresh one per run unless given.
export CSV_WAVE_SECRET=${CSV_WAVE_SECRET:-$(openssl rand -hex 32)}
TASKS=${1:-100000}
BIN=${BIN:-$PWD/dist/cli/bin.js}
WORK=$(mktemp -d /tmp/bullmq-memory-XXXXXX)
PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
URL=redis://127.0.0.1:$PORT
redis-server --port "$PORT" --bind 127.0.0.1 --dir "$WORK" --save '' --appendonly no > "$WORK/redis.log" 2>&1 &
REDIS=$!
trap 'kill $REDIS 2>/dev/null; rm -rf "$WORK"' EXIT
until grep -q 'Ready to accept' "$WORK/redis.log"; do sleep 0.1; done
echo 'export default async (task) => ({ findings: "ok " + task.id });' > "$WORK/noop.mjs"
dir=$WORK/s; mkdir -p "$dir/.csv-wave"
{ echo 'id,title,description,role,deps,context_from,exec_mode'
  for i in $(seq 1 "$TASKS"); do echo "\"T$i\",\"\",\"noop\",\"worker\",\"\",\"\",\"\""; done; } > "$dir/tasks.csv"
echo '{"pipeline":"generic"}' > "$dir/session.json"
echo memory > "$dir/.csv-wave/session-id"
started=$(date +%s.%N)
/usr/bin/time -f "%e %U %S %M" -o "$WORK/time" node ${NODE_ARGS:-} "$BIN" run "$dir" --module "$WORK/noop.mjs" --concurrency "$TASKS" \
  --grace 0 --backend bullmq --redis "$URL" > "$WORK/out" 2>&1 &
TIMER=$!
until [ "$(redis-cli -p "$PORT" llen bull:csv-wave-memory:wait)" -ge "$TASKS" ]; do
  kill -0 "$TIMER" 2>/dev/null || { echo "the coordinator ended early"; cat "$WORK/out"; exit 1; }
  sleep 0.5
done
queued=$(echo "$(date +%s.%N) - $started" | bc -l)
redis_mb=$(redis-cli -p "$PORT" info memory | awk -F: '/^used_memory:/ {printf "%.0f", $2/1048576}')
kill -INT "$(pgrep -P "$TIMER" node)"
code=0; wait "$TIMER" || code=$?
# The last line: time writes "Command exited with non-zero status N" first when it is not 0 (130 after Ctrl-C).
read -r wall user sys peak < <(tail -1 "$WORK/time")
left=$(redis-cli -p "$PORT" llen bull:csv-wave-memory:wait)
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
printf '%d jobs queued in %.1f s; coordinator peak RSS %.0f MB (wall %s s, user %s s, sys %s s, exit %s, %s jobs left after Ctrl-C); Redis used_memory %s MB; load average %s at the start, %s at the end\n' \
  "$TASKS" "$queued" "$(echo "$peak / 1024" | bc -l)" "$wall" "$user" "$sys" "$code" "$left" "$redis_mb" "$LOAD_START" "$LOAD_END"
echo "uptime before: $UPTIME_START"
echo "uptime after: $(uptime)"
# One line for scripts/bench/bullmq.ts, which writes BENCHMARKS.md's section.
printf 'RESULT {"tasks":%d,"queuedSeconds":%.1f,"peakMb":%.0f,"userSeconds":%s,"left":%s,"redisMb":%s,"loadStart":"%s","loadEnd":"%s"}\n' \
  "$TASKS" "$queued" "$(echo "$peak / 1024" | bc -l)" "$user" "$left" "$redis_mb" "$LOAD_START" "$LOAD_END"
