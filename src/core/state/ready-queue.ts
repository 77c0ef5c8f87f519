/** A binary min-heap of tasks ready to start: lower priority rank first, then file order. */
export class ReadyQueue<T extends { rank: number; index: number }> {
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let at = items.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!before(items[at]!, items[parent]!)) break;
      [items[at], items[parent]] = [items[parent]!, items[at]!];
      at = parent;
    }
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let at = 0;
      for (;;) {
        const left = 2 * at + 1;
        const right = left + 1;
        let smallest = at;
        if (left < items.length && before(items[left]!, items[smallest]!)) smallest = left;
        if (right < items.length && before(items[right]!, items[smallest]!)) smallest = right;
        if (smallest === at) break;
        [items[at], items[smallest]] = [items[smallest]!, items[at]!];
        at = smallest;
      }
    }
    return top;
  }
}

function before(a: { rank: number; index: number }, b: { rank: number; index: number }): boolean {
  return a.rank !== b.rank ? a.rank < b.rank : a.index < b.index;
}
