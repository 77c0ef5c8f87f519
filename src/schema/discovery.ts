import { z } from 'zod';

/** A discovery as a task reports it: the engine adds the time and the worker. */
export const discoveryInputSchema = z
  .object({
    type: z.string().min(1),
    data: z.record(z.string(), z.unknown()),
  })
  .strict();

/** One line of discoveries.ndjson (DESIGN.md section 7). */
export const discoveryLineSchema = z
  .object({
    ts: z.string(),
    worker: z.string(),
    type: z.string().min(1),
    data: z.record(z.string(), z.unknown()),
  })
  .strict();

export type DiscoveryInput = z.infer<typeof discoveryInputSchema>;
export type DiscoveryLine = z.infer<typeof discoveryLineSchema>;
