// Whether a task runs in a block's rescue section (at any depth): it runs because a task of that
// block failed, so the outputs show it as cleanup after the failure, not as the deploy going on.
import type { Block, Task, TaskKeywords } from '../playbook/model.js';

/** `chain`: the enclosing blocks and includes, outermost first, as the host walker yields them. */
export function inRescue(chain: readonly TaskKeywords[], task: Task): boolean {
  return chain.some((outer, i) => {
    const block = outer as Partial<Block>;
    return block.kind === 'block' && (block.rescue ?? []).includes((chain[i + 1] ?? task) as Block | Task);
  });
}
