// `tsbm schemas -o DIR`: writes the JSON Schemas for editors (playbook, inventory, events, one
// per module) where a project keeps its playbooks. The package ships the same files in its
// schemas/ directory (node_modules/tsbm/schemas/ in a project that installs tsbm).
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('schemas')
    .description('write the JSON Schemas for editors (playbook, inventory, events, modules) into a directory')
    .requiredOption('-o, --output <dir>', 'directory to write into (created if missing; other files there are left alone)')
    .addHelpText(
      'after',
      '\nExamples:\n  tsbm schemas -o .schemas\n  then start a playbook with: # yaml-language-server: $schema=.schemas/playbook.json',
    )
    .action(async (flags: { output: string }) => {
      const { writeSchemas } = await import('../playbook/published-schemas.js');
      const names = writeSchemas(flags.output);
      process.stdout.write(`wrote ${names.length} schemas to ${flags.output} (playbook.json, inventory.json, events.json, modules/*.json)\n`);
    });
}
