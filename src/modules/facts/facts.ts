// facts: memory, CPUs, disks, interfaces, system UUID, SELinux, podman, in ONE remote command.
// Registered under `facts` (and `ansible_facts`, for Ansible habits). gather_facts.ts is the
// same module under Ansible's name.
import { Type } from '../../schema/type-builder.js';
import { TsbmError } from '../../errors.js';
import { defineModule } from '../../module-api/types.js';
import { FACTS_SCRIPT, parseFacts } from './facts-script.js';

const args = Type.Object({}, { additionalProperties: true, description: 'No arguments (extra keys such as gather_subset are ignored).' });

export const factsModule = defineModule({
  name: 'facts',
  summary: 'Gather host facts: memory, CPUs, disks (lsblk), interfaces and MACs, system UUID, SELinux, podman',
  description:
    'One remote `sh -c` command; missing tools are tolerated (their facts are absent). Facts land in `facts` and `ansible_facts`, e.g. facts.memory.total_mb, facts.disks, facts.macs, facts.system_uuid.',
  runsOn: 'target',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  example: `- name: Gather facts
  facts:`,
  async run(ctx) {
    const r = await ctx.exec(['sh', '-c', FACTS_SCRIPT]);
    if (r.rc !== 0 || !r.stdout.includes('@@tsbm:end')) {
      throw new TsbmError('runtime', `gathering facts on ${ctx.host} failed: ${r.stderr.trim() || `rc ${r.rc}`}`, {
        host: ctx.host,
        task: ctx.task,
        hint: 'the target needs a POSIX sh',
      });
    }
    const facts = parseFacts(r.stdout);
    return { changed: false, facts, ansible_facts: facts };
  },
});
