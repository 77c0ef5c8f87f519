#!/usr/bin/env node
// A deterministic stand-in for an LLM agent: it plays every role of the brainstorm, analyze
// and lifecycle pipelines through csv-wave's command executor, so that a whole session runs
// offline. Everything it writes says it is scripted. It reads the task as JSON on stdin
// and prints one result object on stdout.
//
//   csv-wave run SESSION --cmd 'node /path/to/samples/brainstorm/scripted-agent.mjs'
//
// The challenger reports HIGH severity in round 0 and none after, so the GC loop runs one
// revision round; set SCRIPTED_AGENT_ALWAYS_HIGH=1 to make it never satisfied.
//
// In a lifecycle session: the writers give their drafts with pending manifests; QUALITY-001
// scores traceability low (55) and every later check high; the planner routes `orchestrated`
// (SCRIPTED_AGENT_ROUTE=direct|orchestrated|architecture to choose); the executors give
// their code as passed; the tester fails IMPL-001's code on its first check and passes every
// recheck (SCRIPTED_AGENT_ALWAYS_FAIL=1: fails it every time).
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

// --- lifecycle (seed 003) ---------------------------------------------------------------

const kebab = (text) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60) || 'artifact';
const upstreamManifests = () => task.upstream?.manifests ?? [];
const registry = () => readJson(join(task.session, 'artifact-registry.json'))?.artifacts ?? [];

/** An artifact of this task and its manifest. */
function made(artifactId, type, content, status, version = '1') {
  return {
    artifact: { name: artifactId, content },
    manifest: { artifact_id: artifactId, artifact_type: type, version, path: `artifacts/${task.id}/${artifactId}.md`, validation_status: status },
  };
}

function results(findings, items, extra = {}) {
  return { findings, artifacts: items.map((item) => item.artifact), artifact_manifests: items.map((item) => item.manifest), ...extra };
}

/** A revision (`Revise the output of DRAFT-002 …`) or a fix (`Fix the artifact(s) a, b that IMPL-001 made`): the artifacts it gives again. */
function redone() {
  const fix = /^Fix the artifact\(s\) (.+?) that (\S+) made/.exec(row.description);
  if (fix) return fix[1].split(', ');
  const revision = /^Revise the output of (\S+) with/.exec(row.description);
  if (revision) return registry().filter((entry) => entry.metadata.task_id === revision[1]).map((entry) => entry.artifact_id);
  return [];
}

function lifecycleWriter() {
  const again = redone();
  const ids = again.length > 0 ? again : [kebab(row.title)];
  const items = ids.map((id) => {
    const earlier = [...upstreamManifests(), ...registry()].find((entry) => entry.artifact_id === id);
    const version = earlier ? String(Number(earlier.version) + 1 || 2) : '1';
    return made(id, earlier?.artifact_type ?? id, `# ${row.title}\n\n[scripted] ${id} of ${topic}, version ${version}.\n`, 'pending', version);
  });
  return results(`[scripted] Drafted ${ids.join(', ')} for ${topic}.`, items);
}

function qualityCheck() {
  const first = !/-\d+$/.test(row.id) || row.id.endsWith('-001');
  const scores = { completeness: 85, consistency: 80, traceability: first ? 55 : 82, depth: 78, coverage: 81 };
  return {
    findings: `[scripted] Quality of the specification: ${Object.entries(scores).map(([name, score]) => `${name} ${score}`).join(', ')}.`,
    discoveries: [{ type: 'quality_scores', data: scores }],
  };
}

function planner() {
  const route = process.env.SCRIPTED_AGENT_ROUTE || 'orchestrated';
  return { findings: `[scripted] Plan for ${topic}: three modules (reset form, token service, mailer); medium complexity, route ${route}.`, route };
}

function executor() {
  const again = redone();
  const ids = again.length > 0 ? again : [`code-${row.id.toLowerCase()}`];
  const items = ids.map((id) => {
    const earlier = upstreamManifests().find((entry) => entry.artifact_id === id);
    const version = earlier ? String(Number(earlier.version) + 1 || 2) : again.length > 0 ? '2' : '1';
    return made(id, 'code', `// [scripted] ${id}, version ${version}, for ${topic}\n`, 'passed', version);
  });
  return results(`[scripted] Implemented ${ids.join(', ')}.`, items, { verification: 'self-validated' });
}

function tester() {
  const recheck = row.id.includes('-recheck-');
  const code = upstreamManifests().filter((entry) => entry.artifact_type === 'code');
  const failing = (entry) => !recheck || process.env.SCRIPTED_AGENT_ALWAYS_FAIL === '1' ? entry.metadata.task_id === 'IMPL-001' || entry.artifact_id === 'code-impl-001' : false;
  const validations = code.map((entry) => ({
    artifact_id: entry.artifact_id,
    validation_status: failing(entry) ? 'failed' : 'passed',
    validation_summary: failing(entry) ? '[scripted] 2 of 12 tests fail: the reset token never expires' : '[scripted] 12 of 12 tests pass',
  }));
  const failed = validations.filter((v) => v.validation_status === 'failed').length;
  const report = made(`test-report-${row.id.toLowerCase()}`, 'test-report', `[scripted] ${validations.length} artifact(s) tested, ${failed} failed.\n`, 'passed');
  return results(`[scripted] Tested ${validations.length} artifact(s): ${failed} failed.`, [report], { artifact_validations: validations });
}

const lifecycleRoles = {
  analyst: () => text('Researched the problem, users and constraints'),
  writer: lifecycleWriter,
  reviewer: () => (row.exec_mode === 'interactive' ? qualityCheck() : text(row.id.startsWith('IMPROVE') ? 'Improved the specification' : 'Reviewed the implementation')),
  planner,
  executor,
  tester,
};

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
const play = (session.pipeline === 'lifecycle' ? lifecycleRoles[row.role] : undefined) ?? roles[row.role] ?? (() => text(`Did the ${row.role} task`));
console.log(JSON.stringify({ status: 'completed', ...play() }));
