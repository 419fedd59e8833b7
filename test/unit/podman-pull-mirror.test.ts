// Through the run's image mirror, podman_pull pulls the manifest digest the controller filled and
// names it by the tag afterwards: a tag on the mirror is never what decides what a node installs.
import { describe, expect, it } from 'vitest';
import type { ExecResult } from '../../src/connection/types.js';
import { parseImageSource } from '../../src/module-api/image-ref.js';
import { byFilledDigest } from '../../src/modules/bootc/mirror-pull.js';
import type { OciMirror } from '../../src/images/oci-mirror.js';
import type { ModuleContext } from '../../src/module-api/types.js';
import { podmanPullModule } from '../../src/modules/bootc/podman_pull.js';
import { stepsOneByOne } from '../helpers/steps-one-by-one.js';

const DIGEST = `sha256:${'c'.repeat(64)}`;

describe('byFilledDigest', () => {
  it('a tag is pulled by the filled digest, then tagged; a digest reference is pulled as it is', () => {
    expect(byFilledDigest(parseImageSource('oci://reg.lab:5000/os/bootc:41'), DIGEST)).toEqual({
      pull: `reg.lab:5000/os/bootc@${DIGEST}`,
      tag: ['podman', 'tag', `reg.lab:5000/os/bootc@${DIGEST}`, 'reg.lab:5000/os/bootc:41'],
    });
    expect(byFilledDigest(parseImageSource('oci://fedora'), DIGEST).pull).toBe(`docker.io/library/fedora@${DIGEST}`);
    const pinned = `oci://reg.lab/os@sha256:${'d'.repeat(64)}`;
    expect(byFilledDigest(parseImageSource(pinned), DIGEST)).toEqual({ pull: pinned.slice(6) });
  });
});

describe('podman_pull through the mirror', () => {
  it('pulls the filled digest with the mirror login, then gives it the tag bootc_install runs', async () => {
    const lines: string[] = [];
    const mirror: OciMirror = {
      address: '127.0.0.1:5999',
      username: 'tsbm',
      password: 'nodes-password-xyz',
      fill: async () => ({ digest: DIGEST, blobsCopied: 0, bytesCopied: 0, size: { compressed: 1024, layers: 1 } }),
      stop: async () => undefined,
    };
    const answers: Array<[RegExp, Partial<ExecResult>]> = [
      [/^uname -m/, { stdout: 'x86_64\n' }],
      [/^cat \/proc\/meminfo/, { stdout: 'MemAvailable: 8000000 kB\n' }],
      [/^podman pull --help/, { stdout: '      --retry-delay string\n' }],
      [/podman pull /, { stdout: `${'e'.repeat(64)}\n` }],
    ];
    const ctx = {
      host: 'n1',
      vars: { image_download_source: 'local', instance_info: { image_source: 'oci://reg.lab:5000/os/bootc:41' } },
      check: false,
      diff: false,
      signal: new AbortController().signal,
      task: 'Pull the image',
      services: { playbookDir: '/', tmpDir: '/tmp', get: <T>(_k: string, _c: () => T) => Promise.resolve(mirror) as T, onClose: () => undefined },
      async exec(argv: readonly string[]) {
        const line = argv.join(' ');
        lines.push(line);
        const hit = answers.find(([re]) => re.test(line));
        return { rc: 0, stdout: '', stderr: '', ...(hit?.[1] ?? {}) };
      },
      execSteps: (steps: readonly (readonly string[])[], opts?: object) => stepsOneByOne(ctx.exec, steps, opts),
      put: async () => undefined,
      secret: <T extends string>(v: T) => v,
      log: () => undefined,
      warn: () => undefined,
      progress: () => undefined,
    } as unknown as ModuleContext;
    const r = await podmanPullModule.run(ctx, {});
    expect(r.changed).toBe(true);
    const pull = lines.find((l) => / pull /.test(l) && !l.includes('--help'))!;
    expect(pull).toMatch(new RegExp(`podman pull --authfile \\S+ --retry-delay=5s reg\\.lab:5000/os/bootc@${DIGEST}$`));
    expect(lines).toContain(`podman tag reg.lab:5000/os/bootc@${DIGEST} reg.lab:5000/os/bootc:41`);
    expect(lines.indexOf(`podman tag reg.lab:5000/os/bootc@${DIGEST} reg.lab:5000/os/bootc:41`)).toBeGreaterThan(lines.indexOf(pull));
  });
});
