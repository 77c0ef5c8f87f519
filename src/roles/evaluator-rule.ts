import type { TaskResult } from '../schema/result.js';
import type { Normalised, ResultCheck, RoleAnswerFields } from './rule-types.js';

/** The evaluator's criteria (prompts/brainstorm/evaluator.md), each scored 0 to 10. */
const kCriteria = ['feasibility', 'innovation', 'impact', 'cost'] as const;
const kMinScore = 0;
const kMaxScore = 10;
const kRecommendations = ['pursue', 'pursue with changes', 'park', 'drop'] as const;

/**
 * What a model's evaluator answer must give: one `evaluation` discovery per proposal with
 * its scores, weighted score, rank and recommendation (the board's evaluation entries are
 * what a reader of the session compares proposals by).
 */
export const kEvaluatorAnswerFields: RoleAnswerFields = {
  properties: {
    discoveries: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          type: { type: 'string', enum: ['evaluation'] },
          data: {
            type: 'object',
            properties: {
              proposal_title: { type: 'string', minLength: 1 },
              scores: {
                type: 'object',
                properties: Object.fromEntries(kCriteria.map((name) => [name, { type: 'number' }])),
                required: kCriteria,
                additionalProperties: false,
              },
              weighted_score: { type: 'number' },
              rank: { type: 'integer' },
              recommendation: { type: 'string', enum: kRecommendations },
            },
            required: ['proposal_title', 'scores', 'weighted_score', 'rank', 'recommendation'],
            additionalProperties: false,
          },
        },
        required: ['type', 'data'],
        additionalProperties: false,
      },
    },
  },
  required: ['discoveries'],
};

/**
 * The evaluator's rule, for a model's completed answer only (`require`): at least one
 * evaluation, each with its fields, and every number in its range, which servers do not
 * enforce (JSON Schema's `minimum`/`maximum` are not part of their grammars). Other
 * executors' results and failed answers pass as they are.
 */
export function evaluatorRule(role: string, result: TaskResult, check: ResultCheck): Normalised {
  if (role !== 'evaluator' || check !== 'require' || result.status !== 'completed') return { ok: true, result };
  const evaluations = (result.discoveries ?? []).map((entry, index) => ({ entry, index })).filter(({ entry }) => entry.type === 'evaluation');
  if (evaluations.length === 0) {
    return { ok: false, problem: 'discoveries must hold one entry of type "evaluation" per proposal, with its scores; there is none' };
  }
  const problems: string[] = [];
  for (const { entry, index } of evaluations) problems.push(...evaluationProblems(entry.data, `discoveries.${index}.data`));
  return problems.length === 0 ? { ok: true, result } : { ok: false, problem: problems.join('; ') };
}

function evaluationProblems(data: Record<string, unknown>, path: string): string[] {
  const problems: string[] = [];
  const score = (value: unknown, at: string) => {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < kMinScore || value > kMaxScore) {
      problems.push(`${at} must be a number from ${kMinScore} to ${kMaxScore}, got ${JSON.stringify(value ?? null)}`);
    }
  };
  if (typeof data.proposal_title !== 'string' || data.proposal_title.trim() === '') {
    problems.push(`${path}.proposal_title must name the proposal, got ${JSON.stringify(data.proposal_title ?? null)}`);
  }
  const scores = data.scores;
  if (scores === null || typeof scores !== 'object' || Array.isArray(scores)) {
    problems.push(`${path}.scores must be an object with ${kCriteria.join(', ')}, got ${JSON.stringify(scores ?? null)}`);
  } else {
    for (const name of kCriteria) score((scores as Record<string, unknown>)[name], `${path}.scores.${name}`);
  }
  score(data.weighted_score, `${path}.weighted_score`);
  if (!Number.isInteger(data.rank) || (data.rank as number) < 1) {
    problems.push(`${path}.rank must be a whole number from 1 (the best), got ${JSON.stringify(data.rank ?? null)}`);
  }
  const recommendation = typeof data.recommendation === 'string' ? data.recommendation.trim().toLowerCase() : data.recommendation;
  if (!(kRecommendations as readonly unknown[]).includes(recommendation)) {
    problems.push(`${path}.recommendation must be one of ${kRecommendations.map((text) => `"${text}"`).join(', ')}, got ${JSON.stringify(data.recommendation ?? null)}`);
  }
  return problems;
}
