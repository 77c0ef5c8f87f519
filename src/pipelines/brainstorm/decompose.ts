import type { TaskRow } from '../../core/task.js';
import { newRow } from '../new-row.js';

/** How much of the brainstorm pipeline `init` lays out (seed 004). */
export const kBrainstormModes = [
  /** IDEA → CHALLENGE → SYNTH. */
  'quick',
  /** IDEA → CHALLENGE → GC-CHECK → revision IDEA → SYNTH → EVAL. */
  'deep',
  /** Parallel IDEA tasks → CHALLENGE → GC-CHECK → revision IDEA → SYNTH → EVAL (the seed's example). */
  'full',
] as const;
export type BrainstormMode = (typeof kBrainstormModes)[number];

export const kDefaultAngles = ['Technical', 'Product', 'Innovation', 'Risk'];

/** Angles one parallel ideator covers in full mode: the seed gives three to the first, then one each. */
const kAnglesPerIdeator = 3;

const kText = {
  ideaMultiTitle: 'Multi-angle idea generation',
  ideaMulti:
    'Generate 3+ ideas per angle with title, description, assumption, and potential impact. Cover all assigned angles comprehensively.',
  ideaSingleTitle: (angle: string) => `Parallel angle generation (${angle})`,
  ideaSingle: (angle: string) =>
    `Generate 3+ ideas focused on ${angle} angle with title, description, assumption, and potential impact.`,
  challengeTitle: 'Critique generated ideas',
  challenge:
    'Read all idea artifacts. Challenge each idea across assumption validity, feasibility, risk, and competition dimensions. Assign severity (CRITICAL/HIGH/MEDIUM/LOW) per idea. Output GC signal.',
  gcTitle: 'GC loop decision',
  gc: 'Evaluate critique severity counts. If any HIGH/CRITICAL: REVISION_NEEDED. Else: CONVERGED.',
  reviseTitle: (round: number) => `Revise ideas (GC Round ${round})`,
  revise: 'Address HIGH/CRITICAL challenges from critique. Retain unchallenged ideas intact. Replace unsalvageable ideas.',
  synthTitle: 'Synthesize proposals',
  synth:
    'Extract themes from ideas and critiques. Resolve conflicts. Generate 1-3 integrated proposals with feasibility and innovation scores.',
  evalTitle: 'Score and rank proposals',
  eval: 'Score each proposal: Feasibility 30%, Innovation 25%, Impact 25%, Cost 20%. Generate final ranking and recommendation.',
};

export interface BrainstormPlan {
  angles: readonly string[];
  mode: BrainstormMode;
}

/** The tasks of a brainstorm session; `full` with the default angles gives the seed's example rows. */
export function brainstormTasks({ angles, mode }: BrainstormPlan): TaskRow[] {
  const groups = mode === 'full' ? groupAngles(angles) : [angles];
  const ideas = groups.map((group, index) => {
    // An ideator of its own for one angle is the seed's "parallel angle generation".
    const single = group.length === 1 && groups.length > 1;
    return newRow({
      id: `IDEA-${String(index + 1).padStart(3, '0')}`,
      title: single ? kText.ideaSingleTitle(group[0]!) : kText.ideaMultiTitle,
      description: single ? kText.ideaSingle(group[0]!) : kText.ideaMulti,
      role: 'ideator',
      angle: group.join(';'),
    });
  });
  const ideaIds = ideas.map((row) => row.id).join(';');
  const challenge = newRow({
    id: 'CHALLENGE-001',
    title: kText.challengeTitle,
    description: kText.challenge,
    role: 'challenger',
    deps: ideaIds,
    context_from: ideaIds,
  });
  if (mode === 'quick') {
    const synth = newRow({
      id: 'SYNTH-001',
      title: kText.synthTitle,
      description: kText.synth,
      role: 'synthesizer',
      deps: challenge.id,
      context_from: `${ideaIds};${challenge.id}`,
    });
    return [...ideas, challenge, synth];
  }
  const gc = newRow({
    id: 'GC-CHECK-001',
    title: kText.gcTitle,
    description: kText.gc,
    role: 'gc-controller',
    gc_round: '1',
    deps: challenge.id,
    context_from: challenge.id,
    exec_mode: 'interactive',
  });
  const revision = newRow({
    id: `IDEA-${String(ideas.length + 1).padStart(3, '0')}`,
    title: kText.reviseTitle(1),
    description: kText.revise,
    role: 'ideator',
    gc_round: '1',
    deps: gc.id,
    context_from: challenge.id,
  });
  const synth = newRow({
    id: 'SYNTH-001',
    title: kText.synthTitle,
    description: kText.synth,
    role: 'synthesizer',
    deps: revision.id,
    context_from: `${ideaIds};${revision.id};${challenge.id}`,
  });
  const evaluation = newRow({
    id: 'EVAL-001',
    title: kText.evalTitle,
    description: kText.eval,
    role: 'evaluator',
    deps: synth.id,
    context_from: synth.id,
  });
  return [...ideas, challenge, gc, revision, synth, evaluation];
}

/** Texts of the rows a GC round appends, shared with the GC controller. */
export const kBrainstormText = kText;

function groupAngles(angles: readonly string[]): string[][] {
  if (angles.length <= kAnglesPerIdeator) return [[...angles]];
  return [angles.slice(0, kAnglesPerIdeator), ...angles.slice(kAnglesPerIdeator).map((angle) => [angle])];
}
