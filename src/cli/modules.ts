// `tsbm modules [NAME]`: the module reference, generated from the registry's schemas.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('modules')
    .description('list modules, or show one module\'s arguments and an example')
    .argument('[name]', 'module name')
    .option('--json', 'print the argument schema (JSON Schema) instead of text')
    .addHelpText('after', '\nExamples:\n  tsbm modules\n  tsbm modules redfish_power\n  tsbm modules redfish_power --json')
    .action(async (name: string | undefined, flags: { json?: boolean }) => {
      const { modulesCommand } = await import('./modules-command.js');
      process.stdout.write(modulesCommand(name, flags.json === true));
    });
}
