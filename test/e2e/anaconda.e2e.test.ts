// The parts of an anaconda deploy that run for real on this machine. The OEMDRV volume tsbm
// writes, attached as a block device (a loop device here, a virtual USB stick or CD on a BMC),
// read back by the tools the installer's side uses: blkid finds the label (udev and dracut
// look the volume up by it), isoinfo and the kernel's iso9660 driver read ks.cfg. And the
// callback endpoint under concurrent nodes: six network namespaces run the default template's
// own callback function with the real curl, at once, from their own addresses, against tsbm's
// HTTP server on the machine side of a veth.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKickstart } from '../../src/modules/anaconda/kickstart-parse.js';
import { buildKickstart, planSource } from '../../src/modules/anaconda/kickstart-plan.js';
import { buildOemdrvIso } from '../../src/modules/anaconda/oemdrv.js';
import { waitForInstall } from '../../src/modules/anaconda/install-wait.js';
import { type FileServer, startFileServer } from '../../src/http/file-server.js';
import { InstallCallbacks, type Registration } from '../../src/http/install-callbacks.js';
import { createLoopDisk, detachAll, assertOwnLoop } from './lab/loopdisk.js';
import { createNetns, destroyAllNetns, inNetns, type Netns } from './lab/netns.js';
import { haveTool, isRoot, sh } from './lab/run.js';

const TEMPLATE_FILE = resolve(import.meta.dirname, '../../playbooks/templates/ks.cfg.hbs');
const SECRET = Buffer.from('robot:e2e-Pull-s3cret').toString('base64');
const ready = isRoot && ['blkid', 'isoinfo', 'losetup', 'mount', 'ip', 'nsenter', 'curl'].every(haveTool);

function nodeVars(name: string): Record<string, unknown> {
  return {
    inventory_hostname: name,
    instance_info: {
      image_source: 'oci://registry.lab:5000/os/bootc:41',
      image_pull_secret: SECRET,
      bootc_authorized_keys: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE2e me@ctl',
      configdrive: { user_data: `#cloud-config\nhostname: ${name}\n` },
    },
  };
}

async function kickstartFor(reg: { url: string; token: string }, name: string): Promise<{ text: string; authJson: string | undefined }> {
  const vars = nodeVars(name);
  const plan = planSource(vars, { tlsVerify: true }, () => undefined);
  const built = await buildKickstart({ vars, host: name, task: 'e2e', template: readFileSync(TEMPLATE_FILE, 'utf8'), templateFile: TEMPLATE_FILE, plan, callback: reg, secret: () => undefined });
  expect(built.problems).toEqual([]);
  return { text: built.text, authJson: plan.authJson };
}

describe.skipIf(!ready)('anaconda deploy parts on real tools (needs root, blkid, isoinfo, losetup, mount, ip, nsenter, curl)', { timeout: 120_000 }, () => {
  let dir: string;
  let oemdrv: { device: string; text: string } | undefined;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-anaconda-e2e-'));
  });
  afterAll(() => {
    try {
      detachAll();
    } finally {
      destroyAllNetns();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the OEMDRV volume on a block device: blkid sees its label, isoinfo reads ks.cfg, and no secret is on it', async () => {
    const token = 'e2e-token-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
    const { text } = await kickstartFor({ url: 'http://10.231.9.1:8080/install/0123456789abcdef01234567', token }, 'node01');
    const iso = buildOemdrvIso(text);
    expect(iso.includes(Buffer.from(SECRET))).toBe(false);
    expect(iso.includes(Buffer.from('e2e-Pull-s3cret'))).toBe(false);
    const disk = createLoopDisk(iso.length);
    assertOwnLoop(disk.device);
    const fd = openSync(disk.file, 'r+');
    writeSync(fd, iso, 0, iso.length, 0);
    closeSync(fd);
    const probe = sh(['blkid', '-p', '-o', 'export', disk.device]).stdout;
    expect(probe).toMatch(/^LABEL=OEMDRV$/m);
    expect(probe).toMatch(/^TYPE=iso9660$/m);
    expect(sh(['isoinfo', '-d', '-i', disk.device]).stdout).toMatch(/^Volume id: OEMDRV$/m);
    expect(sh(['isoinfo', '-R', '-x', '/ks.cfg', '-i', disk.device]).stdout).toBe(text);
    expect(sh(['isoinfo', '-J', '-x', '/ks.cfg', '-i', disk.device]).stdout).toBe(text);
    // What the installer then parses is the kickstart tsbm checked.
    expect(parseKickstart(text).commands.map((c) => c.name)).toContain('ostreecontainer');
    oemdrv = { device: disk.device, text };
  });

  // Some VMs run a kernel without the iso9660 driver (and no modules to load it).
  const kernelIso = readFileSync('/proc/filesystems', 'utf8').includes('iso9660');
  it.skipIf(!kernelIso)('the kernel mounts the OEMDRV volume and reads ks.cfg (skipped where the kernel has no iso9660 driver)', () => {
    expect(oemdrv).toBeDefined();
    const mnt = join(dir, 'mnt');
    sh(['mkdir', '-p', mnt]);
    sh(['mount', '-o', 'ro', '-t', 'iso9660', oemdrv!.device, mnt]);
    try {
      expect(readFileSync(join(mnt, 'ks.cfg'), 'utf8')).toBe(oemdrv!.text);
      expect(sh(['ls', mnt]).stdout.trim()).toBe('ks.cfg');
    } finally {
      sh(['umount', mnt]);
    }
  });

  describe('the callback endpoint under concurrent nodes', () => {
    const N = 6;
    let server: FileServer;
    let callbacks: InstallCallbacks;
    let ns: Netns[];
    const regs: Registration[] = [];
    const fns: string[] = [];
    let authJson: string | undefined;

    beforeAll(async () => {
      ns = Array.from({ length: N }, (_, i) => createNetns(`ks${i}`, 0x30 + i));
      server = await startFileServer({ host: ns[0]!.hostIp });
      callbacks = InstallCallbacks.attach(server);
      for (let i = 0; i < N; i++) {
        authJson = planSource(nodeVars(`node0${i}`), { tlsVerify: true }, () => undefined).authJson;
        const reg = callbacks.register(`node0${i}`, { ...(authJson ? { pullSecret: authJson } : {}) });
        const { text } = await kickstartFor({ url: reg.url, token: reg.token }, `node0${i}`);
        regs.push(reg);
        const pre = parseKickstart(text).sections.find((s) => s.kind === 'pre')!.body;
        const fn = pre.split('\n').find((l) => l.startsWith('tsbm() {'));
        expect(fn, 'the default %pre defines tsbm()').toBeDefined();
        fns.push(fn!);
      }
    });
    afterAll(async () => {
      await server?.close();
    });

    function inNode(i: number, script: string): Promise<{ rc: number; out: string }> {
      const argv = inNetns(ns[i]!, ['sh', '-c', script]);
      return new Promise((ok) => {
        const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString()));
        child.stderr.on('data', (c: Buffer) => (out += c.toString()));
        child.on('close', (rc) => ok({ rc: rc ?? 1, out }));
      });
    }

    it("six nodes' real curl at once: each node's outcome, source address, one pull secret each; wrong tokens and replays refused", async () => {
      const waits = regs.map((r) => waitForInstall(r, { timeoutMs: 60_000, signal: new AbortController().signal }));
      const secretFile = (i: number) => join(dir, `auth-${i}.json`);
      const log = join(dir, 'anaconda.log');
      writeFileSync(log, '12:00:00,000 ERROR anaconda: storage: no usable disks selected\n');
      const runs = await Promise.all(
        regs.map((_, i) => {
          const fn = fns[i]!;
          if (i === 4) return inNode(i, `${fn}\ntsbm start && tsbm error '${log}'`);
          if (i === 5) {
            // Another node's token first (refused), then its own; then a replayed start (refused).
            const foreign = fn.replace(regs[5]!.token, regs[0]!.token);
            return inNode(i, `${foreign}\nif tsbm start; then echo foreign-accepted; fi\n${fn}\ntsbm start && tsbm end && echo done\ntsbm start || echo replay-refused`);
          }
          return inNode(i, `${fn}\ntsbm start && (umask 077; tsbm pull-secret > '${secretFile(i)}') && tsbm end && echo done`);
        }),
      );
      const outs = await Promise.all(waits);
      for (let i = 0; i < N; i++) {
        if (i === 4) {
          expect(outs[i]).toMatchObject({ kind: 'failed', body: expect.stringContaining('no usable disks selected') });
          continue;
        }
        expect(outs[i]?.kind, runs[i]!.out).toBe('ended');
        expect(regs[i]!.callbacks.map((c) => c.from)).toEqual([ns[i]!.nsIp, ns[i]!.nsIp]);
      }
      for (let i = 0; i < 4; i++) {
        expect(readFileSync(secretFile(i), 'utf8')).toBe(authJson);
        expect(regs[i]!.pullSecretFetched).toBe(true);
      }
      expect(runs[5]!.out).not.toContain('foreign-accepted');
      expect(runs[5]!.out).toContain('done');
      expect(runs[5]!.out).toContain('replay-refused');
      expect(regs[5]!.refused.map((r) => [r.what, r.why, r.from])).toEqual([
        ['start', 'wrong_token', ns[5]!.nsIp],
        ['start', 'replayed', ns[5]!.nsIp],
      ]);
      expect(regs.slice(0, 5).every((r) => r.refused.length === 0)).toBe(true);
    });
  });
});
