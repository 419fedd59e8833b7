// What happens before a play's first task touches its hosts: the node locks (all or none; a
// refused lock stops the run, nothing of it touching any node), then, for a play that declares
// `provision:`, the run's admission of each node (a refused node fails at once). A resumed run
// also locks the hosts that stay failed, so it may end their nodes safe after the plays.
import type { Play } from '../playbook/model.js';
import { admitHosts, nodeFactsOf } from './node-admit.js';
import { lockTargets } from './node-identity.js';
import type { RunRuntime } from './play-runtime.js';

/** The hosts that go on into the play, or undefined when the run stopped here. */
export async function enterPlay(rt: RunRuntime, play: Play, hosts: readonly string[], targeted: readonly string[]): Promise<string[] | undefined> {
  const hooks = rt.deps.hooks;
  const failedBefore = targeted.filter((h) => !hosts.includes(h) && hooks?.staysFailed?.(h) !== undefined);
  const locked = [...hosts, ...failedBefore];
  const targets = lockTargets(rt, play, locked);
  if (hooks?.beforePlay && locked.length > 0) {
    try {
      await hooks.beforePlay(targets);
    } catch (e) {
      // e.g. a node locked by another run: nothing of this run may touch any node
      rt.state.fatal = e instanceof Error ? e : new Error(String(e));
      rt.state.interrupted = true;
      for (const h of hosts) rt.state.leave(h, `not started: ${rt.state.fatal.message}`);
      rt.bus.emit({ type: 'warning', time: Date.now(), message: `run stopped: ${rt.state.fatal.message}` });
      return undefined;
    }
  }
  for (const t of targets.slice(hosts.length)) rt.nodeFacts.set(t.host, nodeFactsOf(rt, play, t, rt.rebuild));
  return admitHosts(rt, play, targets.slice(0, hosts.length), { partial: rt.partial, rebuild: rt.rebuild });
}
