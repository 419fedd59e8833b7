// The anaconda deploy's kickstart: the install source each image_source form becomes, the
// default template rendered for each (and passing tsbm's own checks), what it does with the
// pull secret, keys and config drive, and what the checks refuse in a replaced template.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { checkKickstart } from '../../src/modules/anaconda/kickstart-check.js';
import { parseKickstart, splitWords } from '../../src/modules/anaconda/kickstart-parse.js';
import { buildKickstart, chooseInstallDisk, planSource } from '../../src/modules/anaconda/kickstart-plan.js';
import { authorizedKeyList } from '../../src/modules/anaconda/kickstart-render.js';
import { planKickstartSource, sourceLine } from '../../src/modules/anaconda/kickstart-source.js';
import { parseHints } from '../../src/module-api/root-device-hints.js';

const TEMPLATE_FILE = path.resolve(import.meta.dirname, '../../playbooks/templates/ks.cfg.hbs');
const TEMPLATE = readFileSync(TEMPLATE_FILE, 'utf8');
const CALLBACK = { url: 'http://10.0.0.1:8080/install/0123456789abcdef01234567', token: 'tok-ABCdef_0123456789' };
const SHA = 'a'.repeat(64);
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function render(vars: Record<string, unknown>, opts: { tlsVerify?: boolean; template?: string } = {}) {
  const secrets: string[] = [];
  const all = { inventory_hostname: 'node01', ...vars };
  const plan = planSource(all, { tlsVerify: opts.tlsVerify ?? true }, (v) => secrets.push(v));
  if (plan.source.file) plan.source.location = 'http://10.0.0.1:8080/files/abc/os.tar.gz';
  const built = await buildKickstart({
    vars: all,
    host: 'node01',
    task: 't',
    template: opts.template ?? TEMPLATE,
    templateFile: TEMPLATE_FILE,
    plan,
    callback: CALLBACK,
    secret: (v) => secrets.push(v),
  });
  return { ...built, plan, secrets };
}

/** The body of the first section of a kind whose body contains `text` (or the first of that kind). */
function section(text: string, kind: string, containing = ''): string {
  const s = parseKickstart(text).sections.find((x) => x.kind === kind && x.body.includes(containing));
  if (!s) throw new Error(`no %${kind} section`);
  return s.body;
}

describe('install source from image_source', () => {
  it('oci:// -> ostreecontainer; http(s) tarball or image -> liveimg (sha256 checked); tree URL -> url; file:// -> liveimg served', () => {
    const oci = planKickstartSource({ source: 'oci://quay.io/fedora/fedora-bootc:41', hashAlgo: undefined, hashValue: undefined });
    expect(oci.kind).toBe('ostreecontainer');
    expect(sourceLine(oci)).toBe('ostreecontainer --url=quay.io/fedora/fedora-bootc:41 --transport=registry --no-signature-verification');
    const tar = planKickstartSource({ source: 'https://img.lab/os/rhel9.tar.gz', hashAlgo: 'sha256', hashValue: SHA.toUpperCase() });
    expect(sourceLine(tar)).toBe(`liveimg --url=https://img.lab/os/rhel9.tar.gz --checksum=${SHA}`);
    const img = planKickstartSource({ source: 'http://img.lab/os/root.squashfs.img', hashAlgo: undefined, hashValue: undefined });
    expect(sourceLine(img)).toBe('liveimg --url=http://img.lab/os/root.squashfs.img');
    const tree = planKickstartSource({ source: 'http://mirror.lab/fedora/41/Everything/x86_64/os/', hashAlgo: undefined, hashValue: undefined });
    expect(tree.kind).toBe('url');
    expect(sourceLine(tree)).toBe('url --url=http://mirror.lab/fedora/41/Everything/x86_64/os/');
    const file = planKickstartSource({ source: 'file:///srv/images/os.tar.gz', hashAlgo: undefined, hashValue: undefined });
    expect(file).toMatchObject({ kind: 'liveimg', file: '/srv/images/os.tar.gz' });
  });

  it('refuses what the installer cannot take, saying what to give instead', () => {
    const plan = (source: string, hashAlgo?: string, hashValue?: string) => () => planKickstartSource({ source, hashAlgo, hashValue });
    expect(plan('ftp://x/os.tar')).toThrow(/neither oci:\/\/, http\(s\):\/\/ nor file:\/\//);
    expect(plan('https://x/os.tar', 'md5', 'b'.repeat(32))).toThrow(/liveimg checks SHA-256 only/);
    expect(plan('https://x/os.tar', 'sha256', 'nothex')).toThrow(/not a sha256 checksum/);
    expect(plan('https://x/o$s.tar')).toThrow(/kickstart line cannot carry/);
    expect(plan('oci://reg.lab/o"s:1')).toThrow(/kickstart line cannot carry/);
    expect(plan('oci://')).toThrow(/no valid reference/);
    expect(plan('')).toThrow(/no image to install/);
  });
});

describe('the default template', () => {
  it('ostreecontainer: the pull secret is fetched once in %pre onto tmpfs, never written into the kickstart, and removed after', async () => {
    const secret = b64('robot:s3cret-pass');
    const r = await render({
      instance_info: { image_source: 'oci://reg.lab:5000/os/bootc:41', image_pull_secret: secret, bootc_authorized_keys: 'ssh-ed25519 AAAAC3Nza me@ctl' },
    });
    expect(r.problems).toEqual([]);
    expect(r.text).toContain('ostreecontainer --url=reg.lab:5000/os/bootc:41 --transport=registry --no-signature-verification');
    expect(r.text).toContain('rootpw --lock');
    expect(r.text).toContain("sshkey --username=root 'ssh-ed25519 AAAAC3Nza me@ctl'");
    expect(r.text).not.toContain(secret);
    expect(r.text).not.toContain('s3cret-pass');
    expect(r.plan.authJson).toBe(JSON.stringify({ auths: { 'reg.lab:5000': { auth: secret } } }));
    expect(r.secrets).toContain(secret);
    expect(r.secrets).toContain(r.plan.authJson);
    const pre = section(r.text, 'pre');
    expect(pre).toContain(`${CALLBACK.url}/"$1"`);
    expect(pre).toContain(`-H 'X-Tsbm-Token: ${CALLBACK.token}'`);
    expect(pre).toMatch(/umask 077 && mkdir -p \/run\/ostree && tsbm pull-secret > \/run\/ostree\/auth\.json/);
    expect(section(r.text, 'post', 'tsbm end')).toMatch(/rm -f \/run\/ostree\/auth\.json/);
    expect(section(r.text, 'onerror')).toMatch(/rm -f \/run\/ostree\/auth\.json/);
    // Only this node's disk, from the root device hints tsbm answers with.
    expect(parseKickstart(r.text).includes).toEqual([{ path: '/tmp/tsbm-disk.ks', line: expect.any(Number) }]);
    expect(pre).toMatch(/tsbm disk \/tmp\/tsbm-lsblk\.json > \/tmp\/tsbm-disk\.ks/);
  });

  it('liveimg from a tarball, with the checksum; no pull secret step; a registry is marked insecure only for oci://', async () => {
    const r = await render({ instance_info: { image_source: 'https://img.lab/os.tar.gz', image_os_hash_value: SHA } }, { tlsVerify: false });
    expect(r.problems).toEqual([]);
    expect(parseKickstart(r.text).commands.filter((c) => c.name === 'liveimg')).toEqual([
      { name: 'liveimg', args: ['--url=https://img.lab/os.tar.gz', `--checksum=${SHA}`], line: expect.any(Number) },
    ]);
    expect(r.text).not.toContain('pull-secret');
    expect(r.text).not.toContain('registries.conf.d');
    const oci = await render({ instance_info: { image_source: 'oci://reg.lab:5000/os/bootc:41' } }, { tlsVerify: false });
    expect(section(oci.text, 'pre')).toContain(`printf '[[registry]]\\nlocation = "%s"\\ninsecure = true\\n' reg.lab:5000 >`);
  });

  it('url from an install tree', async () => {
    const r = await render({ instance_info: { image_source: 'http://mirror.lab/fedora/41/os/' } });
    expect(r.problems).toEqual([]);
    expect(parseKickstart(r.text).commands.find((c) => c.name === 'url')?.args).toEqual(['--url=http://mirror.lab/fedora/41/os/']);
  });

  it('writes the config drive into cloud-init’s seed directory in %post, byte for byte', async () => {
    const r = await render({
      inventory_hostname: 'node07',
      uuid: '3f1c0b1e-0000-4000-8000-000000000007',
      instance_info: { image_source: 'oci://reg.lab/os:1', configdrive: { user_data: '#cloud-config\nhostname: node07\n', meta_data: { public_keys: { k: 'ssh-ed25519 AAAA x' } } } },
    });
    expect(r.problems).toEqual([]);
    const post = section(r.text, 'post', 'seed');
    const files = new Map<string, string>();
    for (const m of post.matchAll(/base64 -d > '?([^' ]+)'? <<'TSBM_EOF'\n([\s\S]*?)\nTSBM_EOF/g)) files.set(m[1]!, Buffer.from(m[2]!.replace(/\n/g, ''), 'base64').toString());
    expect(files.get('/var/lib/cloud/seed/config_drive/openstack/latest/user_data')).toBe('#cloud-config\nhostname: node07\n');
    expect(JSON.parse(files.get('/var/lib/cloud/seed/config_drive/openstack/2012-08-10/meta_data.json')!)).toMatchObject({
      uuid: '3f1c0b1e-0000-4000-8000-000000000007',
      name: 'node07',
      public_keys: { k: 'ssh-ed25519 AAAA x' },
    });
    // The end callback comes after the config drive is written.
    const ks = parseKickstart(r.text);
    const seedAt = ks.sections.findIndex((s) => s.body.includes('seed'));
    const endAt = ks.sections.findIndex((s) => s.kind === 'post' && s.body.includes('tsbm end'));
    expect(seedAt).toBeGreaterThanOrEqual(0);
    expect(endAt).toBeGreaterThan(seedAt);
  });

  it('a key that is not one OpenSSH line is refused', () => {
    expect(authorizedKeyList('ssh-ed25519 AAAA a\n\n# comment\nssh-rsa BBBB b')).toEqual(['ssh-ed25519 AAAA a', 'ssh-rsa BBBB b']);
    expect(() => authorizedKeyList('ssh-ed25519 "AAAA" x')).toThrow(/not one OpenSSH public key line/);
  });
});

describe('checks of a replaced template', () => {
  const good = (src: string) =>
    [
      'text',
      src,
      'poweroff',
      '%pre',
      `curl -H 'X-Tsbm-Token: {{ ks.callback.token }}' {{ ks.callback.url }}/start`,
      '%end',
      '%post --nochroot',
      `curl -H 'X-Tsbm-Token: {{ ks.callback.token }}' {{ ks.callback.url }}/end`,
      '%end',
      '%onerror',
      `curl -H 'X-Tsbm-Token: {{ ks.callback.token }}' {{ ks.callback.url }}/error`,
      '%end',
      '',
    ].join('\n');
  const vars = { instance_info: { image_source: 'oci://reg.lab/os:1' } };

  it('a minimal template with the three callbacks passes', async () => {
    expect((await render(vars, { template: good('{{ ks.source.line }}') })).problems).toEqual([]);
  });

  it('says what is missing: callbacks, the source, poweroff; refuses reboot, two sources and unknown commands', async () => {
    const noCallbacks = await render(vars, { template: 'text\n{{ ks.source.line }}\n%pre\necho hi\n%end\n' });
    expect(noCallbacks.problems.join('\n')).toMatch(/no poweroff/);
    const reboot = await render(vars, { template: good('{{ ks.source.line }}').replace('poweroff', 'reboot') });
    expect(reboot.problems).toEqual([expect.stringMatching(/^line 3: reboot would boot the installer again while its media are inserted; use poweroff/)]);
    for (const s of ['%pre does not call back "start"', '%post does not call back "end"', '%onerror does not call back "error"']) expect(noCallbacks.problems.join('\n')).toContain(s);
    expect((await render(vars, { template: good('') })).problems).toEqual([expect.stringMatching(/^no install source/)]);
    expect((await render(vars, { template: good('{{ ks.source.line }}\nliveimg --url=http://x/y.tar') })).problems).toEqual([expect.stringMatching(/^2 install sources/)]);
    expect((await render(vars, { template: good('{{ ks.source.line }}\nautoaprt') })).problems).toEqual([expect.stringMatching(/"autoaprt" is not a kickstart command \(did you mean autopart\?\)/)]);
  });

  it('refuses a template that writes the pull secret into the kickstart', async () => {
    const secret = b64('robot:hunter2-pass');
    const r = await render(
      { instance_info: { image_source: 'oci://reg.lab/os:1', image_pull_secret: secret } },
      { template: `${good('{{ ks.source.line }}')}# {{ instance_info.image_pull_secret }}\n` },
    );
    expect(r.problems.join('\n')).toMatch(/carries the pull secret in clear/);
  });

  it('an undefined variable is a template error naming it and the template file', async () => {
    const e = await render(vars, { template: good('{{ ks.source.line }}\n# {{ no_such_var }}') }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TsbmError);
    expect((e as TsbmError).message).toMatch(/no_such_var/);
    expect((e as TsbmError).pos?.file).toBe(TEMPLATE_FILE);
  });

  it('a section without %end or a stray %end is a syntax error with its line', () => {
    expect(checkKickstart('text\n%pre\necho\n', { callbackUrl: CALLBACK.url, token: CALLBACK.token }).problems).toEqual(['kickstart line 2: %pre has no %end']);
    expect(checkKickstart('text\n%end\n', { callbackUrl: CALLBACK.url, token: CALLBACK.token }).problems).toEqual(['kickstart line 2: %end without a section']);
    expect(splitWords(`sshkey --username=root "ssh-ed25519 AAAA x" # comment`, 1)).toEqual(['sshkey', '--username=root', 'ssh-ed25519 AAAA x']);
  });
});

describe('the disk the installer is told to use', () => {
  const lsblk = JSON.stringify({
    blockdevices: [
      { name: 'sda', kname: 'sda', path: '/dev/sda', size: 500 * 1024 ** 3, type: 'disk', ro: false, rm: false, rota: true, serial: 'S1' },
      { name: 'nvme0n1', kname: 'nvme0n1', path: '/dev/nvme0n1', size: 100 * 1024 ** 3, type: 'disk', ro: false, rm: false, rota: false, serial: 'N1' },
      { name: 'sr0', kname: 'sr0', path: '/dev/sr0', size: 1024 ** 3, type: 'rom', ro: true, rm: true, rota: true },
    ],
  });
  it('applies root device hints and confines the installer to that one disk', () => {
    expect(chooseInstallDisk(lsblk, parseHints({ serial: 'S1' }))).toMatchObject({
      ok: true,
      device: '/dev/sda',
      lines: 'ignoredisk --only-use=sda\nclearpart --all --initlabel --drives=sda\n',
    });
    expect(chooseInstallDisk(lsblk, parseHints(undefined))).toMatchObject({ ok: true, device: '/dev/nvme0n1' });
    const none = chooseInstallDisk(lsblk, parseHints({ serial: 'nope' }));
    expect(none.ok).toBe(false);
    expect(!none.ok && none.message).toMatch(/no disk matches root device hints serial/);
  });
});
