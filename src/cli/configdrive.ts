// `tsbm configdrive build`: writes locally the same config-2 ISO configdrive_write would put
// on a node's disk, for inspection (isoinfo, mount) before a deploy.
import type { Command } from 'commander';

interface BuildFlags {
  from?: string;
  host?: string;
  inventory?: string[];
  output: string;
}

async function build(flags: BuildFlags): Promise<string> {
  const { writeFileSync } = await import('node:fs');
  const { createHash } = await import('node:crypto');
  const { optionsError } = await import('../errors.js');
  const { nodeIdentity } = await import('../configdrive/content.js');
  const { resolveConfigDrive } = await import('../configdrive/source.js');
  const { getPath } = await import('../inventory/node-data.js');

  let vars: Record<string, unknown> = { inventory_hostname: flags.host ?? 'node' };
  if (flags.host) {
    if (!flags.inventory?.length) throw optionsError('--host needs an inventory', 'add -i INVENTORY');
    const { loadInventories } = await import('../inventory/load.js');
    const { inventoryVarsFor } = await import('../inventory/vars.js');
    const inv = loadInventories(flags.inventory);
    vars = { ...inventoryVarsFor(inv, flags.host), inventory_hostname: flags.host };
  }
  let value: unknown;
  if (flags.from) {
    const { loadYamlFile } = await import('../schema/yaml-source.js');
    value = loadYamlFile(flags.from).value;
  } else {
    value = getPath(vars, 'instance_info.configdrive');
    if (value === undefined) {
      throw optionsError(
        'nothing to build',
        'give --from FILE.yml|json, or --host NAME -i INVENTORY whose instance_info.configdrive is set',
      );
    }
  }
  const { iso, source } = await resolveConfigDrive(value, nodeIdentity(vars));
  writeFileSync(flags.output, iso);
  const sha = createHash('sha256').update(iso).digest('hex');
  return `wrote ${flags.output}: config-2 ISO from ${source === 'dict' ? 'a dict' : source === 'url' ? 'a URL' : 'an ISO string'}, ${iso.length} bytes, sha256 ${sha}\n`;
}

export function register(program: Command): void {
  const cd = program.command('configdrive').description('config drive (config-2 ISO) tools');
  cd.command('build')
    .description('write the config-2 ISO that configdrive_write would put on the disk')
    .option(
      '--from <file>',
      'YAML or JSON file holding the config drive (dict with meta_data, network_data, user_data, vendor_data; or an ISO string/URL)',
    )
    .option(
      '--host <name>',
      'take defaults (name, uuid) and, without --from, instance_info.configdrive from this inventory host',
    )
    .option(
      '-i, --inventory <file>',
      'inventory: YAML file, executable script or directory (repeatable)',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .requiredOption('-o, --output <file>', 'where to write the ISO')
    .addHelpText(
      'after',
      '\nExamples:\n  tsbm configdrive build --from cd.yml -o cd.iso && isoinfo -R -l -i cd.iso\n  tsbm configdrive build --host node1 -i inventory.yml -o node1.iso',
    )
    .action(async (flags: BuildFlags) => {
      process.stdout.write(await build(flags));
    });
}
