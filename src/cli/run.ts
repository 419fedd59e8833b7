// `tsbm run PLAYBOOK -i INV`: declares the options; the work happens in run-command.ts,
// imported only when the command runs.
import { type Command, InvalidArgumentError, Option } from 'commander';
import { addVaultOptions } from './vault-options.js';
import { STATE_OPTION_HELP } from './nodes.js';

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

const positiveInt = (value: string): number => {
  if (!/^\s*\d+\s*$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive integer.');
  return Number(value);
};

const EXAMPLES = `
Examples:
  tsbm run playbooks/deploy-bootc.yml -i inventory.yml
  tsbm run deploy.yml -i lab.yml -i site.yml -l 'rack1:!node07' -f 20
  tsbm run deploy.yml -i inventory.yml -e 'image=oci://registry/os:42 wipe=true' -e @overrides.yml
  tsbm run deploy.yml -i inventory.yml -e '{"root_device": {"size": ">= 100"}}'
  tsbm run playbooks/deploy-bootc.yml -i inventory.yml -t power --check   the power-off step only
  tsbm run playbooks/deploy-bootc.yml -i inventory.yml --skip-tags finish --diff
  tsbm run deploy.yml -i inventory.yml --list-tasks
  tsbm run deploy.yml -i inventory.yml --output plain --junit results.xml   (CI)
  tsbm run deploy.yml -i inventory.yml --junit results.xml --junit-cases task   a testcase per task
  tsbm run deploy.yml -i inventory.yml --report report.html   timeline to open in a browser
  tsbm run deploy.yml -i inventory.yml --resume last    continue the last run where each host stopped
  tsbm run deploy.yml -i inventory.yml --resume last -e bmc_pw=...   inline -e values given again
  tsbm run deploy.yml -i inventory.yml --shard 2/4      second of four parallel slices

Before the first task, the playbook is checked as \`tsbm validate\` checks it, for the hosts and
tasks this run targets (variables to the last key): on any problem the run does not start,
every problem is listed (file:line:col), exit 4, and no host, lock or journal is touched.

Output: live tree on a terminal, one line per host result otherwise (--output plain),
JSON Lines with --output json (schema: schemas/events.json). -v shows module arguments,
-vv commands, -vvv stdout/stderr; secrets are masked everywhere.
Ctrl-C (or SIGTERM) stops scheduling new tasks and lets running ones finish (exit 99);
press it again to quit at once. A --limit that matches no host, or an empty one, is an error (exit 1).

--resume continues what the run left unfinished, nothing else: hosts that failed stay failed
(--retry-failed runs them again from the start of the play), a host the run ended safe after
an interrupt (powered off, media ejected) starts again from the start, and the others go on
where they stopped. A cleanup (rescue) step is never "done" for a failure of the resumed run.
It is the same run: its --limit, --tags, --skip-tags, --start-at-task, --shard,
--check and --diff come back from the journal (giving different ones is refused, exit 5), and
a check run resumes only in check mode. A run against a tsbm_sim inventory (a lab for one run)
cannot be resumed: its lab is gone; use tsbm sim up for a lab that outlives a run. The journal holds extra vars by name and salted hash,
never values: -e @files are read again, values given inline must be given again.

Tags of the shipped playbooks, one per step: preflight, power, ramdisk, discover, deploy,
configure, finish (erase in undeploy.yml); the ramdisk identity check and the root disk come
with every step that needs them, the cleanup after a failure always. A --tags or --skip-tags
value that matches no task is a warning naming the tags the playbook has.

Roles: looked up by name in roles/ beside the playbook, then --roles-path and $TSBM_ROLES_PATH
(DIR:DIR), then the roles tsbm ships (power-off, boot-ramdisk, wait-agent, discover, deploy, ...),
so a playbook in any repository can use them by name.

Node locks: one per machine (BMC address, else SSH address), in --lock-dir, else
$TSBM_LOCK_DIR, else /var/lib/tsbm/locks for root, else $XDG_STATE_HOME/tsbm/locks
(~/.local/state/tsbm/locks). Controllers that share nodes must share this directory.`;

export function register(program: Command): void {
  const run = program
    .command('run')
    .description('run a playbook against an inventory')
    .argument('<playbook>', 'playbook file')
    .option('-i, --inventory <file>', 'inventory: YAML or INI file, executable script or directory (repeatable; default: inventory in tsbm.cfg, $TSBM_INVENTORY)', collect)
    .option('-l, --limit <pattern>', 'only hosts matching this pattern (repeatable)', collect)
    .option('-t, --tags <tags>', 'only tasks with these tags (comma list, repeatable)', collect)
    .option('--skip-tags <tags>', 'skip tasks with these tags (comma list, repeatable)', collect)
    .option('-e, --extra-vars <vars>', 'k=v pairs, a JSON/YAML object or @file.yml (repeatable, later wins)', collect)
    .option('-f, --forks <n>', 'hosts worked on at once (default 50; forks in tsbm.cfg, $TSBM_FORKS)', positiveInt)
    .option('-C, --check', 'plan: report what would change; BMCs, registry and ISO are asked, nothing is changed, ramdisk steps "would run after boot"')
    .option('-D, --diff', 'show the changes made to files')
    .option('--force-handlers', 'run notified handlers on hosts that failed too (force_handlers in tsbm.cfg; a play\'s force_handlers wins)')
    .option('--start-at-task <name>', 'start the playbook at the task with this name')
    .option('--list-hosts', 'list the hosts each play targets and exit')
    .option('--list-tasks', 'list the tasks each play runs and exit')
    .option('--list-tags', 'list the tags in the playbook and exit')
    .option('--syntax-check', 'run the checks a run starts with (as tsbm validate, for the targeted hosts), then exit')
    .addOption(
      new Option('--output <mode>', 'tty (live, default on a terminal), plain (default otherwise) or json').choices([
        'tty',
        'plain',
        'json',
      ]),
    )
    .option('--junit <file>', 'also write JUnit XML results to FILE: a testcase per host per play, its tasks as steps')
    .addOption(
      new Option('--junit-cases <form>', 'host: a testcase per host per play (default); task: one per host and task').choices(['host', 'task']),
    )
    .option('--report <file>', 'also write an HTML report (timeline, summary, per-node results) to FILE at the end')
    .option(
      '--resume <run>',
      'continue a run (id from `tsbm runs list`, or "last") with its options: skip what completed, restore registered values',
    )
    .option('--force', 'with --resume: resume even though the playbook, inventory or extra-var values changed')
    .option('--retry-failed', 'with --resume: run the hosts that failed again, from the start of the play (else they stay failed)')
    .option('--roles-path <dirs>', 'where roles are found after roles/ beside the playbook (DIR:DIR, repeatable; also $TSBM_ROLES_PATH)', collect)
    .option('--shard <i/n>', 'only the hosts in slice I of N (stable hash of the host name; see docs/ci.md)')
    .option('--journal-dir <dir>', 'where the run journal is written (see tsbm runs; default .tsbm/runs; journal_dir in tsbm.cfg, $TSBM_JOURNAL_DIR)')
    .option('--no-journal', 'do not write a run journal (node locks and records are still taken and kept)')
    .option('--lock-dir <dir>', 'where node locks are kept (default: see below; lock_dir in tsbm.cfg, $TSBM_LOCK_DIR)')
    .option('--state <setting>', STATE_OPTION_HELP)
    .option('--rebuild', 'a deploy may reinstall nodes that are active (their records say so); protected nodes are still refused');
  addVaultOptions(run)
    .addHelpText('after', EXAMPLES)
    .action(async (playbook: string, flags: Record<string, unknown>, cmd: Command) => {
      const { runCommand } = await import('./run-command.js');
      const { verbosityOf } = await import('./context.js');
      process.exitCode = await runCommand(playbook, flags, verbosityOf(cmd));
    });
}
