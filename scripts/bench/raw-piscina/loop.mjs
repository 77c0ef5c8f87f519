// The raw piscina baseline of scripts/bench/run.ts: the same no-op module calls as a
// csv-wave module run, with nothing but piscina around them, one message per task.
//
//   node scripts/bench/raw-piscina/loop.mjs MODULE TASKS WAVES THREADS CONCURRENCY
//
// A pool of THREADS threads (as the csv-wave run has) taking ceil(CONCURRENCY / THREADS)
// tasks each at once (as csv-wave's pool does); TASKS tasks in WAVES waves of equal size,
// each wave awaited before the next starts, at most CONCURRENCY in flight (csv-wave's
// --concurrency): CONCURRENCY lanes, each awaiting its `pool.run` before the next. Plain
// JavaScript, so that node runs it as it runs dist/ (no TypeScript loader in the timing).
// Prints {"tasks": replies checked, "loopMs": pool start to the last reply}; exits 1 on
// any reply that is not the module's.
import { Piscina } from 'piscina';
import { pathToFileURL } from 'node:url';

const [modulePath, tasksText, wavesText, threadsText, concurrencyText] = process.argv.slice(2);
const [tasks, waves, threads, concurrency] = [tasksText, wavesText, threadsText, concurrencyText].map(Number);
if (!modulePath || ![tasks, waves, threads, concurrency].every((n) => Number.isInteger(n) && n >= 1)) {
  console.error('usage: node loop.mjs MODULE TASKS WAVES THREADS CONCURRENCY');
  process.exit(2);
}

const started = performance.now();
const pool = new Piscina({
  filename: new URL('./worker.mjs', import.meta.url).href,
  minThreads: threads,
  maxThreads: threads,
  concurrentTasksPerWorker: Math.ceil(concurrency / threads),
  workerData: { module: pathToFileURL(modulePath).href },
});

let replies = 0;
const waveStart = (wave) => Math.ceil((wave * tasks) / waves);
for (let wave = 0; wave < waves; wave++) {
  const from = waveStart(wave);
  const to = waveStart(wave + 1);
  const lane = async (first) => {
    for (let index = first; index < to; index += concurrency) {
      const reply = await pool.run({ id: `T${index + 1}` });
      if (reply?.findings !== '') throw new Error(`task ${index + 1}: unexpected reply ${JSON.stringify(reply)}`);
      replies++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, to - from) }, (_, offset) => lane(from + offset)));
}
const loopMs = performance.now() - started;
await pool.destroy();
console.log(JSON.stringify({ tasks: replies, loopMs }));
