#!/usr/bin/env bash
# Issue 13's scaling benchmark: TASKS module tasks that each wait WAIT_MS (agent-like: the
# waits, not the CPUs, are the limit), worker concurrency 16, with 1, 2 and 4 `csv-wave
# worker` processes on one loopback redis-server. Rounds interleave the worker counts, so
# that the load of a shared box falls on all of them alike; prints wall, user, sys, peak KB
# of the coordinator per run and the median speed-up over one worker.
# The coordinator keeps BACKLOG times the workers' concurrency in flight, so that a worker
# that finishes a job finds the next one waiting in Redis instead of waiting for the
# coordinator to add it (1 keeps exactly the workers' concurrency in flight).
# The speed-up is given twice: of the wall time (the coordinator's node start-up included,
# about a second that no worker count shortens) and of the run's own durationMs (--json).
# Usage: scripts/bench/bullmq-scale.sh [rounds=5] [tasks=2000] [wait_ms=200] [backlog=2]
# WORKER_ARGS passes more flags to the workers (e.g. "--workdir /tmp/x").
set -euo pipefail
cd "$(dirname "$0")/../.."
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg); UPTIME_START=$(uptime)
# The coordinator and the workers need one shared secret (never in Redis): a fresh one per run unless given.
export CSV_WAVE_SECRET=${CSV_WAVE_SECRET:-$(openssl rand -hex 32)}
ROUNDS=${1:-5}; TASKS=${2:-2000}; WAIT_MS=${3:-200}; BACKLOG=${4:-2}; PER_WORKER=16
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
declare -A WALL RUN
for round in $(seq 1 "$ROUNDS"); do
  for workers in 1 2 4; do
    id="r$round-w$workers"; dir="$WORK/$id"; session "$dir" "$id"
    pids=()
    for w in $(seq 1 "$workers"); do
      node "$BIN" worker --redis "$URL" --session-id "$id" --concurrency $PER_WORKER ${WORKER_ARGS:-} > "$dir.w$w.log" 2>&1 &
      pids+=($!)
    done
    for w in $(seq 1 "$workers"); do
      until grep -qs 'taking jobs' "$dir.w$w.log"; do
        kill -0 "${pids[$((w - 1))]}" 2>/dev/null || { echo "worker $w ended before taking jobs:"; cat "$dir.w$w.log"; exit 1; }
        sleep 0.1
      done
    done
    /usr/bin/time -f "%e %U %S %M" -o "$dir.time" node "$BIN" run "$dir" --module "$WORK/wait.mjs" \
      --concurrency $((PER_WORKER * workers * BACKLOG)) --backend bullmq --redis "$URL" --json > "$dir.out" 2>&1
    kill -TERM "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
    grep -Eq "\"completed\": *$TASKS\b" "$dir.out" || { echo "run $id did not complete every task"; tail -c 600 "$dir.out"; exit 1; }
    WALL[$round,$workers]=$(cut -d' ' -f1 "$dir.time")
    RUN[$round,$workers]=$(grep -Eo '"durationMs": *[0-9.]+' "$dir.out" | grep -Eo '[0-9.]+$')
    echo "round $round, $workers worker(s): wall user sys peakKB = $(cat "$dir.time"), durationMs ${RUN[$round,$workers]}"
  done
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
declare -A SPEED
for workers in 2 4; do
  ratios=$(for round in $(seq 1 "$ROUNDS"); do echo "${WALL[$round,1]} / ${WALL[$round,$workers]}" | bc -l; done | sort -g)
  runs=$(for round in $(seq 1 "$ROUNDS"); do echo "${RUN[$round,1]} / ${RUN[$round,$workers]}" | bc -l; done | sort -g)
  SPEED[wall,$workers]=$(echo "$ratios" | median); SPEED[run,$workers]=$(echo "$runs" | median)
  printf '%d workers: median speed-up over 1 worker %.2fx of the wall time (per round: %s), %.2fx of durationMs\n' \
    "$workers" "${SPEED[wall,$workers]}" "$(echo $ratios | tr '\n' ' ')" "${SPEED[run,$workers]}"
done
walls() { for round in $(seq 1 "$ROUNDS"); do echo "${WALL[$round,$1]}"; done | median; }
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average $LOAD_START at the start, $LOAD_END at the end"
echo "uptime before: $UPTIME_START"
echo "uptime after: $(uptime)"
# One line for scripts/bench/bullmq.ts, which writes BENCHMARKS.md's section.
printf 'RESULT {"tasks":%d,"waitMs":%d,"rounds":%d,"wall1":%s,"wall2":%s,"wall4":%s,"wallSpeedup2":%s,"wallSpeedup4":%s,"runSpeedup2":%s,"runSpeedup4":%s,"loadStart":"%s","loadEnd":"%s"}\n' \
  "$TASKS" "$WAIT_MS" "$ROUNDS" "$(walls 1)" "$(walls 2)" "$(walls 4)" "${SPEED[wall,2]}" "${SPEED[wall,4]}" "${SPEED[run,2]}" "${SPEED[run,4]}" "$LOAD_START" "$LOAD_END"
