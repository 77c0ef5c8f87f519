import type { PipelineName } from '../schema/session.js';
import { DiscussionGate } from './discussion-gate.js';
import { GcController } from './gc-controller.js';
import type { InteractiveHandler } from './types.js';

/** The interactive handlers each pipeline brings, by role. */
export function handlersFor(pipeline: PipelineName): Map<string, InteractiveHandler> {
  switch (pipeline) {
    case 'brainstorm':
      return new Map([['gc-controller', new GcController()]]);
    case 'analyze':
      return new Map([['discussant', new DiscussionGate()]]);
    case 'generic':
      return new Map();
  }
}
