import type { TaskRow } from '../../core/task.js';
import { newRow } from '../new-row.js';

/**
 * The starter of a generic session: two independent tasks and a report that depends on
 * both and reads their findings. Roles are free text in a generic session; these show that
 * the rows are meant to be replaced by the user's own.
 */
export function genericStarterTasks(topic: string | undefined): TaskRow[] {
  const about = topic === undefined || topic.trim() === '' ? '' : ` (topic: ${topic})`;
  return [
    newRow({
      id: 'STEP-001',
      description: `Replace this row with your first task${about}; it runs in wave 1.`,
      role: 'worker',
    }),
    newRow({
      id: 'STEP-002',
      description: `Replace this row with a task that runs beside STEP-001${about}.`,
      role: 'worker',
    }),
    newRow({
      id: 'REPORT-001',
      description: 'Sum up the findings of STEP-001 and STEP-002, which this task receives as prev_context.',
      role: 'reporter',
      deps: 'STEP-001;STEP-002',
      context_from: 'STEP-001;STEP-002',
    }),
  ];
}
