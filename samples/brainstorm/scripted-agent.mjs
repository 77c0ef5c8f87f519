#!/usr/bin/env node
// A deterministic stand-in for an LLM agent: it plays every role of the brainstorm and
// analyze pipelines through csv-wave's command executor, so that a whole session runs
// offline. Everything it writes says it is scripted. It reads the task as JSON on stdin
// and prints one result object on stdout.
//
//   csv-wave run SESSION --cmd 'node /path/to/samples/brainstorm/scripted-agent.mjs'
//
// The challenger reports HIGH severity in round 0 and none after, so the GC loop runs one
// revision round; set SCRIPTED_AGENT_ALWAYS_HIGH=1 to make it never satisfied.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const task = JSON.parse(readFileSync(0, 'utf8'));
const row = task.row;
const round = Number(row.gc_round || '0');
const session = readJson(join(task.session, 'session.json')) ?? {};
const topic = session.topic ?? row.title;
const board = readBoard(join(task.session, 'discoveries.ndjson'));

function readJson(path) {
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined;
}

function readBoard(path) {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line)];
      } catch {
        return [];
      }
    });
}

const angles = row.angle ? row.angle.split(';').map((a) => a.trim()).filter(Boolean) : ['Revision'];
// Sorted: parallel ideators reach the board in either order, and what the agent says must not depend on it.
const ideaTitles = board.filter((d) => d.type === 'idea').map((d) => d.data.title).sort();

function ideator() {
  const ideas = angles.flatMap((angle) =>
    [1, 2, 3].map((n) => ({
      title: `${angle} idea ${n}${round > 0 ? ` (rev ${round})` : ''} for ${topic}`,
      angle,
      description: `[scripted] A ${angle.toLowerCase()} approach #${n} to ${topic}.`,
      assumption: `[scripted] ${angle} constraints allow it.`,
      impact: `[scripted] ${n === 1 ? 'High' : n === 2 ? 'Medium' : 'Low'} impact.`,
    })),
  );
  return {
    findings: `[scripted] Generated ${ideas.length} ideas across ${angles.join(', ')}${round > 0 ? ` (revision round ${round})` : ''}.`,
    discoveries: ideas.map((data) => ({ type: 'idea', data })),
    key_findings: ideas.slice(0, 5).map((idea) => idea.title.slice(0, 90)),
  };
}

function challenger() {
  const high = round === 0 || process.env.SCRIPTED_AGENT_ALWAYS_HIGH === '1' ? 2 : 0;
  const critiques = ideaTitles.slice(0, 6).map((title, i) => ({
    idea_title: title,
    dimension: ['feasibility', 'risk', 'assumption validity'][i % 3],
    severity: i < high ? 'HIGH' : i % 2 === 0 ? 'MEDIUM' : 'LOW',
    challenge: `[scripted] Is "${title}" realistic?`,
    rationale: '[scripted] Canned critique.',
  }));
  const medium = critiques.filter((c) => c.severity === 'MEDIUM').length;
  const low = critiques.filter((c) => c.severity === 'LOW').length;
  return {
    findings: `[scripted] Challenged ${critiques.length} ideas (round ${round}): ${high} HIGH, ${medium} MEDIUM, ${low} LOW.`,
    severity_summary: `CRITICAL:0 HIGH:${high} MEDIUM:${medium} LOW:${low}`,
    gc_signal: high > 0 ? 'REVISION_NEEDED' : 'CONVERGED',
    discoveries: critiques.map((data) => ({ type: 'critique', data })),
  };
}

function synthesizer() {
  const themes = [...new Set(board.filter((d) => d.type === 'idea').map((d) => d.data.angle))].sort().map((name) => ({
    name,
    strength: 7,
    supporting_ideas: ideaTitles.filter((t) => t.startsWith(name)).slice(0, 3),
  }));
  const proposals = themes.slice(0, 3).map((theme, i) => ({
    title: `[scripted] Proposal ${i + 1}: ${theme.name} first`,
    source_ideas: theme.supporting_ideas,
    feasibility: 8 - i,
    innovation: 6 + i,
    description: `[scripted] Combine the ${theme.name} ideas for ${topic}.`,
  }));
  return {
    findings: `[scripted] ${themes.length} themes, ${proposals.length} proposals. Context seen:\n${task.prev_context}`,
    discoveries: [
      ...themes.map((data) => ({ type: 'theme', data })),
      ...proposals.map((data) => ({ type: 'proposal', data })),
    ],
  };
}

function evaluator() {
  const proposals = board.filter((d) => d.type === 'proposal').map((d) => d.data);
  const scored = proposals
    .map((p) => ({ proposal_title: p.title, weighted_score: Math.round((p.feasibility * 0.3 + p.innovation * 0.25 + 7 * 0.25 + 6 * 0.2) * 10) / 10 }))
    .sort((a, b) => b.weighted_score - a.weighted_score)
    .map((e, i) => ({ ...e, rank: i + 1, recommendation: i === 0 ? '[scripted] Go' : '[scripted] Later' }));
  return {
    findings: `[scripted] Ranked ${scored.length} proposals; top: ${scored[0]?.proposal_title ?? 'none'}.`,
    discoveries: scored.map((data) => ({ type: 'evaluation', data })),
  };
}

const text = (what) => ({ findings: `[scripted] ${what} for ${topic}: ${row.title}. ${task.prev_context === 'No previous context available' ? '' : `Built on ${task.prev_context.split('\n').length} earlier result(s).`}`.trim() });

const roles = {
  ideator,
  challenger,
  synthesizer,
  evaluator,
  explorer: () => text(`Explored the ${row.angle || 'main'} angle`),
  analyst: () => text(`Analyzed the ${row.angle || 'main'} angle`),
  discussant: () => text('Discussed the analyses'),
};
const play = roles[row.role] ?? (() => text(`Did the ${row.role} task`));
console.log(JSON.stringify({ status: 'completed', ...play() }));
