import type { TaskRow } from '../../core/task.js';
import { newRow } from '../new-row.js';

/** Depth of the analyze pipeline (seed 002); the number is its discussion round limit. */
export const kAnalyzeModes = { quick: 0, standard: 1, deep: 5 } as const;
export type AnalyzeMode = keyof typeof kAnalyzeModes;

export const kDefaultPerspectives = ['architecture', 'risks', 'user-impact'];

export interface AnalyzePlan {
  topic: string;
  perspectives: readonly string[];
  mode: AnalyzeMode;
}

const number = (n: number) => String(n).padStart(3, '0');

/**
 * EXPLORE-00N and ANALYZE-00N per perspective, then DISCUSS-001 (interactive, the
 * discussion gate; none in quick mode), then SYNTH-001.
 */
export function analyzeTasks({ topic, perspectives, mode }: AnalyzePlan): TaskRow[] {
  const explores = perspectives.map((perspective, index) =>
    newRow({
      id: `EXPLORE-${number(index + 1)}`,
      title: `Explore: ${perspective}`,
      description: `Explore "${topic}" from the ${perspective} perspective: gather the facts, sources and open questions that matter from this angle.`,
      role: 'explorer',
      angle: perspective,
    }),
  );
  const analyses = perspectives.map((perspective, index) =>
    newRow({
      id: `ANALYZE-${number(index + 1)}`,
      title: `Analyze: ${perspective}`,
      description: `Analyze the ${perspective} exploration of "${topic}": key insights, evidence, risks, and points worth discussing.`,
      role: 'analyst',
      angle: perspective,
      deps: explores[index]!.id,
      context_from: explores[index]!.id,
    }),
  );
  const analysisIds = analyses.map((row) => row.id).join(';');
  const discuss =
    mode === 'quick'
      ? undefined
      : newRow({
          id: 'DISCUSS-001',
          title: 'Discussion round 1',
          description: `Aggregate all analyses of "${topic}": convergent themes, conflicting views, the top discussion points and open questions.`,
          role: 'discussant',
          deps: analysisIds,
          context_from: analysisIds,
          exec_mode: 'interactive',
        });
  const synth = newRow({
    id: 'SYNTH-001',
    title: 'Integrate all analysis into final conclusions',
    description: `Integrate every analysis and discussion of "${topic}" into final conclusions: an executive summary with recommendations.`,
    role: 'synthesizer',
    deps: discuss ? discuss.id : analysisIds,
    context_from: discuss ? `${analysisIds};${discuss.id}` : analysisIds,
  });
  return [...explores, ...analyses, ...(discuss ? [discuss] : []), synth];
}
