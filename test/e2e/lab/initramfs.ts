// A tiny initramfs for boot tests: a newc cpio archive (the format the kernel unpacks) with a
// static busybox, /dev/console, and an /init script. Written here, not with cpio(1), so the
// device node needs no mknod on the test machine.
import { readFileSync } from 'node:fs';

interface Entry {
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

/** An initramfs whose /init runs `script` with busybox's sh (busybox must be static). */
export function busyboxInitramfs(busybox: string, script: string): Buffer {
  return newcArchive([
    { name: 'bin', mode: 0o040755 },
    { name: 'dev', mode: 0o040755 },
    { name: 'proc', mode: 0o040755 },
    { name: 'dev/console', mode: 0o020600, rdev: [5, 1] },
    { name: 'bin/busybox', mode: 0o100755, data: readFileSync(busybox) },
    { name: 'init', mode: 0o100755, data: Buffer.from(`#!/bin/busybox sh\n${script}`) },
  ]);
}
