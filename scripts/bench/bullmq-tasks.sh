#!/usr/bin/env bash
# Issue 13's overhead benchmark: TASKS no-op module tasks through a loopback redis-server
# with WORKERS `csv-wave worker` processes, end to end (the coordinator's whole run: start,
# journal, tasks.csv, wave files, the final report), against the local backend on the same
# session. Rounds interleave the two (bullmq, local, bullmq, local …), so that the load of a
# shared box falls on both alike; prints wall, user, sys, peak KB of the coordinator per run,
# tasks/s, and the medians (of tasks/s and of the per-round ratio local/bullmq).
# Usage: scripts/bench/bullmq-tasks.sh [rounds=5] [tasks=5000] [workers=2] [per_worker=64] [in_flight=512]
# COMPARE_BIN=path/to/other/dist/cli/bin.js also runs each round with that tree's coordinator
# and workers (A/B: this tree first in odd rounds, the other first in even ones).
# Set PROFILE=DIR to write --cpu-prof profiles of the coordinator and the workers there,
# WORKER_ARGS to pass more flags to the workers (e.g. "--workdir /tmp/x").
set -euo pipefail
cd "$(dirname "$0")/../.."
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg); UPTIME_START=$(uptime)
# The coordinator and the workers need one shared secret (never in Redis): a fresh one per run unless given.
export CSV_WAVE_SECRET=${CSV_WAVE_SECRET:-$(openssl rand -hex 32)}
ROUNDS=${1:-5}; TASKS=${2:-5000}; WORKERS=${3:-2}; PER_WORKER=${4:-64}; IN_FLIGHT=${5:-512}
BIN=$PWD/dist/cli/bin.js
WORK=$(mktemp -d /tmp/bullmq-tasks-XXXXXX)
PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
URL=redis://127.0.0.1:$PORT
redis-server --port "$PORT" --bind 127.0.0.1 --dir "$WORK" --save '' --appendonly no > "$WORK/redis.log" 2>&1 &
REDIS=$!
trap 'kill $REDIS 2>/dev/null; rm -rf "$WORK"' EXIT
until grep -q 'Ready to accept' "$WORK/redis.log"; do sleep 0.1; done
NODE_PROF=()
if [ -n "${PROFILE:-}" ]; then mkdir -p "$PROFILE"; NODE_PROF=(--cpu-prof --cpu-prof-dir "$PROFILE"); fi
cat > "$WORK/noop.mjs" <<'JS'
export default async function noop(task) {
  return { findings: 'ok ' + task.id };
}
JS
session() { # $1: folder, $2: session id
  mkdir -p "$1/.csv-wave"
  { echo 'id,title,description,role,deps,context_from,exec_mode'
    for i in $(seq 1 "$TASKS"); do echo "\"T$i\",\"\",\"noop\",\"worker\",\"\",\"\",\"\""; done; } > "$1/tasks.csv"
  echo '{"pipeline":"generic"}' > "$1/session.json"
  echo "$2" > "$1/.csv-wave/session-id"
}
rate() { echo "$TASKS / $(cut -d' ' -f1 "$1")" | bc -l; }
bullmq_run() { # $1: session id, $2: the bin.js of the coordinator and the workers
  local id=$1 dir="$WORK/$1" pids=()
  session "$dir" "$id"
  for w in $(seq 1 "$WORKERS"); do
    node "${NODE_PROF[@]}" "$2" worker --redis "$URL" --session-id "$id" --concurrency "$PER_WORKER" ${WORKER_ARGS:-} > "$dir.w$w.log" 2>&1 &
    pids+=($!)
  done
  for w in $(seq 1 "$WORKERS"); do
    until grep -qs 'taking jobs' "$dir.w$w.log"; do
      kill -0 "${pids[$((w - 1))]}" 2>/dev/null || { echo "worker $w ended before taking jobs:"; cat "$dir.w$w.log"; exit 1; }
      sleep 0.1
    done
  done
  /usr/bin/time -f "%e %U %S %M" -o "$dir.time" node "${NODE_PROF[@]}" "$2" run "$dir" --module "$WORK/noop.mjs" \
    --concurrency "$IN_FLIGHT" --backend bullmq --redis "$URL" --json > "$dir.out" 2>&1 || { cat "$dir.out"; exit 1; }
  kill -TERM "${pids[@]}"; wait "${pids[@]}" 2>/dev/null || true
  grep -Eq "\"completed\": *$TASKS\b" "$dir.out" || { echo "bullmq run did not complete every task"; tail -c 600 "$dir.out"; exit 1; }
}
BULL=(); RATIO=(); OLD=()
for round in $(seq 1 "$ROUNDS"); do
  if [ -n "${COMPARE_BIN:-}" ] && [ $((round % 2)) -eq 0 ]; then bullmq_run "r$round-compare" "$COMPARE_BIN"; fi
  bullmq_run "r$round-bullmq" "$BIN"
  b=$(rate "$WORK/r$round-bullmq.time"); BULL+=("$b")
  line=$(printf 'round %d: bullmq %.0f tasks/s (wall user sys peakKB = %s)' "$round" "$b" "$(cat "$WORK/r$round-bullmq.time")")
  if [ -n "${COMPARE_BIN:-}" ]; then
    if [ $((round % 2)) -eq 1 ]; then bullmq_run "r$round-compare" "$COMPARE_BIN"; fi
    o=$(rate "$WORK/r$round-compare.time"); OLD+=("$(echo "$b / $o" | bc -l)")
    line+=$(printf ', compared tree %.0f tasks/s (%s)' "$o" "$(cat "$WORK/r$round-compare.time")")
  fi
  local_dir="$WORK/r$round-local"; session "$local_dir" "r$round-local"
  /usr/bin/time -f "%e %U %S %M" -o "$local_dir.time" node "$BIN" run "$local_dir" --module "$WORK/noop.mjs" --json > "$local_dir.out" 2>&1
  l=$(rate "$local_dir.time"); RATIO+=("$(echo "$l / $b" | bc -l)")
  echo "$line$(printf ', local %.0f tasks/s (%s)' "$l" "$(cat "$local_dir.time")")"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
printf '%d tasks, %d workers x %d: median %.0f tasks/s through bullmq; local/bullmq time ratio median %.2f (load average %s at the start, %s at the end)\n' \
  "$TASKS" "$WORKERS" "$PER_WORKER" "$(median "${BULL[@]}")" "$(median "${RATIO[@]}")" "$LOAD_START" "$LOAD_END"
AB=null
if [ -n "${COMPARE_BIN:-}" ]; then AB=$(median "${OLD[@]}"); printf 'this tree / compared one, tasks/s: median of per-round ratios %.2f\n' "$AB"; fi
echo "uptime before: $UPTIME_START"
echo "uptime after: $(uptime)"
# One line for scripts/bench/bullmq.ts, which writes BENCHMARKS.md's section.
printf 'RESULT {"tasks":%d,"workers":%d,"perWorker":%d,"inFlight":%d,"rounds":%d,"tasksPerSecond":%s,"perRound":[%s],"localOverBullmq":%s,"compared":%s,"loadStart":"%s","loadEnd":"%s"}\n' \
  "$TASKS" "$WORKERS" "$PER_WORKER" "$IN_FLIGHT" "$ROUNDS" "$(median "${BULL[@]}")" "$(IFS=,; echo "${BULL[*]}")" "$(median "${RATIO[@]}")" "$AB" "$LOAD_START" "$LOAD_END"
