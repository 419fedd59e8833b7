// Hostile qcow2 images made with the real qemu-img, each pointing qemu at a "controller file"
// that holds a marker: one by backing file, one by external data file, one by a json: backing
// specification. A deploy that lets qemu-img follow any of them puts the marker on a disk.
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { sha } from './image-fixture.js';

export const SECRET_MARKER = 'CONTROLLER-SECRET-9d41';
/** Where the marker sits in each secret file (and so on a disk that got its bytes). */
export const SECRET_OFFSET = 1024 * 1024 + 512;
const SIZE = 8 * 1024 * 1024;

export interface HostileImage {
  kind: 'backing' | 'data_file' | 'json';
  file: string;
  sha256: string;
  /** The controller file the image names. */
  secret: string;
}

function secretFile(path: string): string {
  writeFileSync(path, Buffer.alloc(SIZE));
  markSecret(path);
  return path;
}

function markSecret(path: string): void {
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.from(SECRET_MARKER), 0, SECRET_MARKER.length, SECRET_OFFSET);
  closeSync(fd);
}

const qemuImg = (args: string[]) => execFileSync('qemu-img', args, { stdio: 'ignore' });

/** The three hostile images in `dir`, named `<kind>.<ext>` (ext: qcow2, or img to hide the format). */
export function hostileQcow2s(dir: string, ext = 'qcow2'): HostileImage[] {
  const backingSecret = secretFile(join(dir, 'secret-backing.raw'));
  const backing = join(dir, `backing.${ext}`);
  qemuImg(['create', '-f', 'qcow2', '-b', backingSecret, '-F', 'raw', backing, String(SIZE)]);

  const jsonSecret = secretFile(join(dir, 'secret-json.raw'));
  const json = join(dir, `json.${ext}`);
  const spec = `json:${JSON.stringify({ driver: 'raw', file: { driver: 'file', filename: jsonSecret } })}`;
  qemuImg(['create', '-f', 'qcow2', '-u', '-b', spec, '-F', 'raw', json, String(SIZE)]);

  // qemu-img creates the data file; the "controller file" is then written in place.
  const dataSecret = join(dir, 'secret-data.raw');
  const dataFile = join(dir, `data_file.${ext}`);
  qemuImg(['create', '-f', 'qcow2', '-o', `data_file=${dataSecret},data_file_raw=on`, dataFile, String(SIZE)]);
  markSecret(dataSecret);

  return [
    { kind: 'backing', file: backing, sha256: sha(backing), secret: backingSecret },
    { kind: 'data_file', file: dataFile, sha256: sha(dataFile), secret: dataSecret },
    { kind: 'json', file: json, sha256: sha(json), secret: jsonSecret },
  ];
}

/** A qcow2 of `virtual` bytes that is a few KiB on disk: the size bomb. */
export function sizeBomb(dir: string, virtual: string): { file: string; sha256: string } {
  const file = join(dir, 'bomb.qcow2');
  qemuImg(['create', '-f', 'qcow2', file, virtual]);
  return { file, sha256: sha(file) };
}
