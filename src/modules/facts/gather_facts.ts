// gather_facts: the facts module under Ansible's name (what `gather_facts: true` on a play runs).
import { defineModule } from '../../module-api/types.js';
import { factsModule } from './facts.js';

export const gatherFactsModule = defineModule({
  ...factsModule,
  name: 'gather_facts',
  example: `- name: Gather facts
  gather_facts:`,
});
