/**
 * Why a run stopped when its Redis stayed away, or refused every write (full, …), longer
 * than `--redis-timeout`, and what to do: the run ended like one whose session folder could
 * not be written (no new task, the running ones back to pending, the journal and tasks.csv
 * intact), so `resume` goes on.
 */
export function redisLostReason(problem: string, path: string): string {
  return (
    `Stopped: ${problem}. No new task was started; the tasks whose jobs were out went back to pending, ` +
    `and every result that came back is kept. Once Redis answers and takes writes again (started again with its data, or those jobs run again), ` +
    `run \`csv-wave resume ${path}\` to go on.`
  );
}
