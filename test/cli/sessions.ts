import { join, relative } from 'node:path';

// Hand-written sessions shared by the CLI tests.

export const kSeedHeader =
  'id,title,description,role,angle,gc_round,deps,context_from,exec_mode,wave,status,findings,gc_signal,severity_summary,error';

/** The findings of IDEA-1: longer than a status line shows, and over two lines. */
export const kLongFindings =
  'Twelve ideas were generated across four angles, the strongest being\na shared cache for agents and a critic that reads diffs.';

/**
 * A valid brainstorm session caught mid-run, with every status: completed (one with
 * findings a spreadsheet would run as a formula, stored guarded), in_progress, failed,
 * skipped for a failure, skipped because a GC check converged, and pending tasks that are
 * blocked or ready.
 */
export const kAllStatusesCsv = `${kSeedHeader}
"IDEA-1","","Generate ideas","ideator","Technical","0","","","csv-wave","1","completed","${kLongFindings}","","",""
"IDEA-2","","Generate ideas","ideator","Risk","0","","","csv-wave","1","in_progress","","","",""
"IDEA-3","","Generate ideas","ideator","Cost","0","","","csv-wave","1","failed","","","","exit code 3: model refused"
"FORMULA","","Generate ideas","ideator","","0","","","csv-wave","1","completed","'=SUM(A1:A9) is what the idea costs","'-HIGH","'@2",""
"CHAL-1","","Critique","challenger","","0","IDEA-3","IDEA-3","csv-wave","2","skipped","","","","Dependency failed or skipped"
"CHAL-2","","Critique","challenger","","0","IDEA-1;IDEA-2","IDEA-1","csv-wave","2","pending","","","",""
"CHAL-3","","Critique","challenger","","0","IDEA-1;FORMULA","IDEA-1","csv-wave","2","completed","No critical issue","","",""
"GC-1","","GC loop decision","gc-controller","","1","CHAL-3","CHAL-3","interactive","3","completed","CONVERGED","","",""
"REV-1","","Revise ideas","ideator","","1","GC-1","CHAL-3","csv-wave","4","skipped","","","","Skipped: GC converged"
"SYNTH-1","","Synthesize","synthesizer","","0","REV-1;CHAL-3","IDEA-1;CHAL-3","csv-wave","5","pending","","","",""
`;

/** Every dependency edge of kAllStatusesCsv, as `dep->task`. */
export const kAllStatusesEdges = [
  'IDEA-3->CHAL-1',
  'IDEA-1->CHAL-2',
  'IDEA-2->CHAL-2',
  'IDEA-1->CHAL-3',
  'FORMULA->CHAL-3',
  'CHAL-3->GC-1',
  'GC-1->REV-1',
  'REV-1->SYNTH-1',
  'CHAL-3->SYNTH-1',
];

/** Status and wave of every task of kAllStatusesCsv. */
export const kAllStatusesTasks: { id: string; status: string; wave: number }[] = [
  { id: 'IDEA-1', status: 'completed', wave: 1 },
  { id: 'IDEA-2', status: 'in_progress', wave: 1 },
  { id: 'IDEA-3', status: 'failed', wave: 1 },
  { id: 'FORMULA', status: 'completed', wave: 1 },
  { id: 'CHAL-1', status: 'skipped', wave: 2 },
  { id: 'CHAL-2', status: 'pending', wave: 2 },
  { id: 'CHAL-3', status: 'completed', wave: 2 },
  { id: 'GC-1', status: 'completed', wave: 3 },
  { id: 'REV-1', status: 'skipped', wave: 4 },
  { id: 'SYNTH-1', status: 'pending', wave: 5 },
];

/**
 * Text with the session's tasks path, as the CLI shows it (absolute, or relative to the
 * working folder when inside it), replaced by `tasks.csv`.
 */
export function withPlainTasksPath(text: string, dir: string): string {
  const absolute = join(dir, 'tasks.csv');
  return text.split(absolute).join('tasks.csv').split(relative(process.cwd(), absolute)).join('tasks.csv');
}
