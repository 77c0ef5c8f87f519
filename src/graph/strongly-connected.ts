/**
 * Tarjan's strongly connected components, with an explicit stack instead of recursion so
 * that a chain or cycle of any length fits (a recursive version overflows near 10,000).
 * Returns the components in the order Tarjan's algorithm closes them.
 */
export function stronglyConnected(
  nodes: Iterable<string>,
  successors: (node: string) => readonly string[],
): string[][] {
  const indexOf = new Map<string, number>();
  const lowOf = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let nextIndex = 0;

  const open = (node: string, frames: { node: string; next: readonly string[]; at: number }[]) => {
    indexOf.set(node, nextIndex);
    lowOf.set(node, nextIndex);
    nextIndex++;
    stack.push(node);
    onStack.add(node);
    frames.push({ node, next: successors(node), at: 0 });
  };

  for (const root of nodes) {
    if (indexOf.has(root)) continue;
    const frames: { node: string; next: readonly string[]; at: number }[] = [];
    open(root, frames);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      if (frame.at < frame.next.length) {
        const successor = frame.next[frame.at++]!;
        if (!indexOf.has(successor)) open(successor, frames);
        else if (onStack.has(successor)) {
          lowOf.set(frame.node, Math.min(lowOf.get(frame.node)!, indexOf.get(successor)!));
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) lowOf.set(parent.node, Math.min(lowOf.get(parent.node)!, lowOf.get(frame.node)!));
      if (lowOf.get(frame.node) === indexOf.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}
