#!/usr/bin/env bash
# Issue 13's scaling benchmark: TASKS module tasks that each wait WAIT_MS (agent-like: the
# waits, not the CPUs, are the limit), worker concurrency 16, with 1, 2 and 4 `csv-wave
# worker` processes on one loopback redis-server. Rounds interleave the worker counts, so
# that the load of a shared box falls on all of them alike; prints wall, user, sys, peak KB
# of the coordinator per run and the median speed-up over one worker.
# Usage: scripts/bench/bullmq-scale.sh [rounds=3] [tasks=2000] [wait_ms=200]
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}; TASKS=${2:-2000}; WAIT_MS=${3:-200}; PER_WORKER=16
BIN=$PWD/dist/cli/bin.js
WORK=$(mktemp -d /tmp/bullmq-bench-XXXXXX)
PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
URL=redis://127.0.0.1:$PORT
redis-server --port "$PORT" --bind 127.0.0.1 --dir "$WORK" --save '' --appendonly no > "$WORK/redis.log" 2>&1 &
REDIS=$!
trap 'kill $REDIS 2>/dev/null; rm -rf "$WORK"' EXIT
until grep -q 'Ready to accept' "$WORK/redis.log"; do sleep 0.1; done
cat > "$WORK/wait.mjs" <<JS
export default async function wait(task) {
  await new Promise((resolve) => setTimeout(resolve, $WAIT_MS));
  return { findings: 'waited ' + task.id };
}
JS
session() { # $1: folder, $2: session id
  mkdir -p "$1/.csv-wave"
  { echo 'id,title,description,role,deps,context_from,exec_mode'
    for i in $(seq 1 "$TASKS"); do echo "\"T$i\",\"\",\"wait\",\"worker\",\"\",\"\",\"\""; done; } > "$1/tasks.csv"
  echo '{"pipeline":"generic"}' > "$1/session.json"
  echo "$2" > "$1/.csv-wave/session-id"
}
declare -A WALL
for round in $(seq 1 "$ROUNDS"); do
  for workers in 1 2 4; do
    id="r$round-w$workers"; dir="$WORK/$id"; session "$dir" "$id"
    pids=()
    for _ in $(seq 1 "$workers"); do
      node "$BIN" worker --redis "$URL" --session-id "$id" --concurrency $PER_WORKER > "$dir.w$_.log" 2>&1 &
      pids+=($!)
    done
    for w in $(seq 1 "$workers"); do until grep -q 'taking jobs' "$dir.w$w.log"; do sleep 0.1; done; done
    /usr/bin/time -f "%e %U %S %M" -o "$dir.time" node "$BIN" run "$dir" --module "$WORK/wait.mjs" \
      --concurrency $((PER_WORKER * workers)) --backend bullmq --redis "$URL" --json > "$dir.out" 2>&1
    kill -TERM "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
    WALL[$round,$workers]=$(cut -d' ' -f1 "$dir.time")
    echo "round $round, $workers worker(s): wall user sys peakKB = $(cat "$dir.time")"
  done
done
for workers in 2 4; do
  ratios=$(for round in $(seq 1 "$ROUNDS"); do echo "${WALL[$round,1]} / ${WALL[$round,$workers]}" | bc -l; done | sort -g)
  median=$(echo "$ratios" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')
  printf '%d workers: median speed-up over 1 worker %.2fx (per round: %s)\n' "$workers" "$median" "$(echo $ratios | tr '\n' ' ')"
done
