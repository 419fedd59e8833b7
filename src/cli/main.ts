// The `tsbm` program. Startup loads almost nothing: `--version` is answered before commander
// is even imported, and every command file is imported when the program is built; each
// command's implementation is imported only inside its action.
import type { Command } from 'commander';
import { EXIT } from '../errors.js';
import { tsbmVersion } from '../util/version.js';
import { redactor } from './context.js';
import { reportError } from './print-error.js';

interface CommandFile {
  register(program: Command): void;
}

/** Every command file exports `register(program)`; add new commands here, one line each. */
const COMMANDS: Array<() => Promise<CommandFile>> = [
  () => import('./run.js'),
  () => import('./validate.js'),
  () => import('./inventory.js'),
  () => import('./modules.js'),
  () => import('./schemas.js'),
  () => import('./runs.js'),
  () => import('./sim.js'),
  () => import('./configdrive.js'),
  () => import('./init.js'),
  () => import('./nodes.js'),
  () => import('./config.js'),
  () => import('./ramdisk.js'),
];

const EXAMPLES = `
Examples:
  tsbm init                                  copy the shipped playbooks and example inventories here
  tsbm run playbooks/deploy-bootc.yml -i inventory-examples/sim.yml   a simulated deploy
  tsbm sim up --nodes 3                      simulated lab, no hardware needed
  tsbm run playbooks/deploy-bootc.yml -i .tsbm/sim/inventory.yml
  tsbm run deploy.yml -i inventory.yml -l 'rack1:!node07' -e image=oci://registry/os:42
  tsbm run deploy.yml -i inventory.yml --check --diff -vv
  tsbm validate playbooks/*.yml -i inventory.yml
  tsbm inventory -i inventory.yml --graph
  tsbm modules bootc_install                 arguments and an example of one module
  tsbm runs list                             recorded runs
  tsbm nodes list                            what tsbm knows of each machine (state, image, protected)
  tsbm runs report last -o report.html       the last run as an HTML page (timeline, failures)
  tsbm inventory import --from-ironic nodes.json -o inventory.yml
  sudo tsbm ramdisk build                    the deploy ramdisk ISO from Debian packages

Exit codes: 0 ok, 1 error, 2 a host failed, 4 unreachable or parse error, 5 bad options,
99 interrupted, 250 unexpected error.`;

export async function buildProgram(): Promise<Command> {
  const { Command } = await import('commander');
  const program = new Command('tsbm');
  program
    .description('Declarative playbook runner for bare-metal provisioning: Redfish, virtual media, bootc')
    .version(tsbmVersion(), '--version', 'print the version and exit')
    .option(
      '-v, --verbose',
      'more output: -v module arguments, -vv commands, -vvv stdout/stderr',
      (_: string, n: number) => n + 1,
      0,
    )
    .helpOption('-h, --help', 'show help')
    .addHelpText('after', EXAMPLES)
    .showSuggestionAfterError(true)
    // Usage errors become one line and exit 5 (see main); set before the commands so they inherit it.
    .exitOverride()
    .configureOutput({
      outputError: (str, write) => write(`tsbm: ${redactor.redact(str.trim().replace(/\s*\n\s*/g, ' '))}\n`),
    });
  const files = await Promise.all(COMMANDS.map((load) => load()));
  for (const f of files) f.register(program);
  return program;
}

/**
 * A closed pipe (`tsbm run ... | head`) must not crash a command, least of all a provisioning
 * run half-way: output is dropped and the work goes on to its end.
 */
function ignoreClosedStdout(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
  });
}

export async function main(argv: string[]): Promise<void> {
  ignoreClosedStdout();
  if (argv.length === 3 && argv[2] === '--version') {
    process.stdout.write(`${tsbmVersion()}\n`);
    return;
  }
  let verbose = argv.slice(2).reduce((n, a) => n + (/^-v+$/.test(a) ? a.length - 1 : a === '--verbose' ? 1 : 0), 0);
  try {
    const program = await buildProgram();
    try {
      await program.parseAsync(argv);
    } finally {
      verbose = Number(program.opts().verbose ?? verbose);
    }
  } catch (err) {
    const { CommanderError } = await import('commander');
    if (err instanceof CommanderError) {
      // --help and --version end by "throwing" with exit code 0; bare `tsbm` shows help with 1.
      process.exitCode = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? EXIT.ok : EXIT.badOptions;
      return;
    }
    process.exitCode = reportError(err, { verbosity: verbose, redactor, write: (t) => process.stderr.write(t) });
  }
}
