// `tsbm init [DIR]`: copies the shipped playbooks and example inventories into a directory, so
// a tsbm installed with npm (globally, or from a tarball) has them at hand wherever it runs.
import type { Command } from 'commander';

const EXAMPLES = `
Examples:
  tsbm init                      into the current directory
  tsbm init ~/deploys && cd ~/deploys
  tsbm run playbooks/deploy-bootc.yml -i inventory-examples/sim.yml     then: a simulated deploy

Copies playbooks/ (deploy-bootc.yml, deploy-image.yml, deploy-ramdisk.yml, deploy-anaconda.yml,
undeploy.yml, their roles and templates/ks.cfg.hbs) and inventory-examples/ (sim.yml, lab.yml). Existing files are kept unless
--force; nothing is copied when one would be replaced. The shipped roles need no copy to be
used: a playbook anywhere finds them by name (after roles/ beside it, --roles-path and
$TSBM_ROLES_PATH).`;

export function register(program: Command): void {
  program
    .command('init')
    .argument('[dir]', 'where to put them', '.')
    .description('copy the shipped playbooks and example inventories into a directory')
    .option('--force', 'replace files that exist')
    .addHelpText('after', EXAMPLES)
    .action(async (dir: string, flags: { force?: boolean }) => {
      const { initCommand } = await import('./init-command.js');
      process.stdout.write(initCommand(dir, flags.force === true));
    });
}
