// facts / gather_facts: memory, CPUs, disks, interfaces, system UUID, SELinux, podman, in ONE
// remote command. Registered under `facts` (and `ansible_facts`, for Ansible habits).
import { Type } from '../schema/type-builder.js';
import { TsbmError } from '../errors.js';
import { FACTS_SCRIPT, parseFacts } from './lib/facts-script.js';
import { defineModule, type ModuleDef } from '../module-api/types.js';

const args = Type.Object({}, { additionalProperties: true, description: 'No arguments (extra keys such as gather_subset are ignored).' });

function factsModule(name: string): ModuleDef<typeof args> {
  return defineModule({
    name,
    summary: 'Gather host facts: memory, CPUs, disks (lsblk), interfaces and MACs, system UUID, SELinux, podman',
    description:
      'One remote `sh -c` command; missing tools are tolerated (their facts are absent). Facts land in `facts` and `ansible_facts`, e.g. facts.memory.total_mb, facts.disks, facts.macs, facts.system_uuid.',
    runsOn: 'target',
    args,
    checkMode: true,
    idempotent: true,
    example: `- name: Gather facts
  ${name}:`,
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
}

export const factsModuleDef = factsModule('facts');
export const gatherFactsModule = factsModule('gather_facts');
