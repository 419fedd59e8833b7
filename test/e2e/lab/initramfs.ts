// A tiny initramfs for boot tests: a newc cpio archive (the format the kernel unpacks) with
// busybox, the shared libraries it links (as ldd names them: Debian's busybox is dynamic, and its
// static twin conflicts with it as a package), /dev/console, and an /init script. Written here,
// not with cpio(1), so the device node needs no mknod on the test machine.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface Entry {
  name: string;
  mode: number;
  data?: Buffer;
  rdev?: [number, number];
}

const hex = (n: number) => n.toString(16).padStart(8, '0');
const pad4 = (n: number) => (4 - (n % 4)) % 4;

function header(e: Entry, ino: number): Buffer {
  const size = e.data?.length ?? 0;
  const [maj, min] = e.rdev ?? [0, 0];
  const fields = ['070701', hex(ino), hex(e.mode), hex(0), hex(0), hex(1), hex(0), hex(size), hex(0), hex(0), hex(maj), hex(min), hex(e.name.length + 1), hex(0)];
  const head = Buffer.from(`${fields.join('')}${e.name}\0`, 'latin1');
  return Buffer.concat([head, Buffer.alloc(pad4(head.length))]);
}

function newcArchive(entries: Entry[]): Buffer {
  const parts: Buffer[] = [];
  entries.forEach((e, i) => {
    parts.push(header(e, i + 1));
    if (e.data) parts.push(e.data, Buffer.alloc(pad4(e.data.length)));
  });
  parts.push(header({ name: 'TRAILER!!!', mode: 0 }, 0));
  return Buffer.concat(parts);
}

/** The absolute paths of the shared objects `program` loads, its dynamic loader included (none when static). */
function sharedLibraries(program: string): string[] {
  let out = '';
  try {
    out = execFileSync('ldd', [program], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return []; // "not a dynamic executable" exits 1
  }
  return [...out.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((m) => m[1]!);
}

/** Every directory above `file` (without the leading /), outermost first. */
function parents(file: string): string[] {
  const dirs: string[] = [];
  for (let d = dirname(file); d !== '/' && d !== '.'; d = dirname(d)) dirs.unshift(d.slice(1));
  return dirs;
}

/** An initramfs whose /init runs `script` with busybox's sh. */
export function busyboxInitramfs(busybox: string, script: string): Buffer {
  const libs = sharedLibraries(busybox);
  const dirs = [...new Set(['bin', 'dev', 'proc', ...libs.flatMap(parents)])];
  return newcArchive([
    ...dirs.map((name) => ({ name, mode: 0o040755 })),
    { name: 'dev/console', mode: 0o020600, rdev: [5, 1] },
    { name: 'bin/busybox', mode: 0o100755, data: readFileSync(busybox) },
    ...libs.map((l) => ({ name: l.slice(1), mode: 0o100755, data: readFileSync(l) })),
    { name: 'init', mode: 0o100755, data: Buffer.from(`#!/bin/busybox sh\n${script}`) },
  ]);
}

export interface InitramfsSpec {
  busybox: string;
  /** Programs of this machine copied at their own paths, with the libraries ldd names. */
  programs: string[];
  /** Further files (name without the leading /). */
  files: Entry[];
  /** /init, run by busybox sh. */
  init: string;
}

/** An initramfs with busybox, this machine's `programs` (and their libraries) and `files`. */
export function programsInitramfs(spec: InitramfsSpec): Buffer {
  const programs = [spec.busybox, ...spec.programs];
  const libs = [...new Set(programs.flatMap(sharedLibraries))];
  const copied = [...new Set([...spec.programs, ...libs])];
  const named = [...copied.map((p) => p.slice(1)), ...spec.files.map((f) => f.name)];
  const dirs = [...new Set(['bin', 'dev', 'proc', 'sys', 'run', 'tmp', 'mnt', 'root', 'etc', ...named.flatMap((n) => parents(`/${n}`))])].sort();
  const have = new Set(spec.files.map((f) => f.name));
  return newcArchive([
    ...dirs.filter((d) => !have.has(d)).map((name) => ({ name, mode: 0o040755 })),
    { name: 'dev/console', mode: 0o020600, rdev: [5, 1] },
    { name: 'bin/busybox', mode: 0o100755, data: readFileSync(spec.busybox) },
    ...copied.map((p) => ({ name: p.slice(1), mode: 0o100755, data: readFileSync(p) })),
    ...spec.files,
    { name: 'init', mode: 0o100755, data: Buffer.from(`#!/bin/busybox sh\n${spec.init}`) },
  ]);
}
