import type { InjectionRule } from '../../schema/session.js';

/** What the seed's specialists do, for the description of a task a rule injects. */
export const kSpecialistWork: Readonly<Record<string, string>> = {
  'security-expert': 'Analyze the security of the plan and the code: threats, vulnerabilities (the OWASP Top 10), and what must change',
  'performance-optimizer': 'Find the bottlenecks of the implementation and optimize them, with measurements before and after',
  'data-engineer': 'Build the data side: schemas, pipelines, ETL jobs and their migrations',
  'devops-engineer': 'Set up CI/CD, containers (docker) and the deployment',
  'ml-engineer': 'Build the ML side: models, training and inference',
  orchestrator: 'Coordinate the modules of the implementation',
};

/** The topic and the findings of the research and of the plan: where the seed's coordinator looks for keywords. */
const kScan = ['topic', 'RESEARCH-001', 'PLAN-001'];

/**
 * The seed's injection table (seed 003, "Dynamic Role Injection") as rules, evaluated when
 * PLAN-001 completes. The keywords are the issue's (a few per row, case-insensitive, whole
 * words). Its last row, "high complexity and several modules: orchestrator replaces IMPL-*",
 * is the lifecycle's routing: PLAN-001's route `orchestrated` or `architecture` runs
 * ORCH-001 (and ARCH-001) ahead of the executors (core/routing.ts).
 */
export const kLifecycleInjectionRules: readonly InjectionRule[] = [
  { id: 'SECURITY-001', role: 'security-expert', on: 'PLAN-001', keywords: ['security', 'vulnerability', 'OWASP'], scan: kScan, after: 'PLAN-001' },
  { id: 'PERF-001', role: 'performance-optimizer', on: 'PLAN-001', keywords: ['performance', 'bottleneck'], scan: kScan, after: 'IMPL-*' },
  { id: 'DATA-001', role: 'data-engineer', on: 'PLAN-001', keywords: ['data', 'ETL', 'schema'], scan: kScan, beside: 'IMPL-*' },
  { id: 'DEVOPS-001', role: 'devops-engineer', on: 'PLAN-001', keywords: ['CI/CD', 'docker'], scan: kScan, after: 'IMPL-*' },
  { id: 'ML-001', role: 'ml-engineer', on: 'PLAN-001', keywords: ['ML', 'training'], scan: kScan, beside: 'IMPL-*' },
];
