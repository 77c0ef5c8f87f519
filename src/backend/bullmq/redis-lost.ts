/**
 * Why a run stopped when its Redis stayed away longer than `--redis-timeout`, and what to
 * do: the run ended like one whose session folder could not be written (no new task, the
 * running ones back to pending, the journal and tasks.csv intact), so `resume` goes on.
 */
export function redisLostReason(problem: string, path: string): string {
  return (
    `Stopped: ${problem}. No new task was started; the tasks whose jobs were out went back to pending, ` +
    `and every result that came back is kept. Start Redis again (with its data, or those jobs run again) ` +
    `and run \`csv-wave resume ${path}\` to go on.`
  );
}
