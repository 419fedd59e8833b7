// `tsbm sim up` runs the lab in a background process of its own; this is that process's side:
// it starts the lab, answers status over a loopback HTTP endpoint, records itself in lab.json,
// and stops everything on SIGTERM/SIGINT.
import { createServer } from 'node:http';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type LabOptions, startLab } from './lab.js';

export interface LabRecord {
  pid: number;
  controlUrl: string;
  inventory: string;
  nodes: number;
  started: number;
}

export const labRecordFile = (dir: string) => join(dir, 'lab.json');

export async function serveLab(opts: LabOptions): Promise<void> {
  const lab = await startLab(opts).catch((e: unknown) => {
    // `sim up` waits on the IPC channel: tell it why, and let go of the channel, or this process
    // would stay alive (and `sim up` wait for its time limit) after the error is printed.
    process.send?.({ error: e instanceof Error ? e.message : String(e) });
    process.disconnect?.();
    // A half-started lab may hold a handle its cleanup missed: the error is reported, so go.
    setTimeout(() => process.exit(process.exitCode ?? 1), 2000).unref();
    throw e;
  });
  const server = createServer((req, res) => {
    if (req.url === '/status') {
      lab
        .status()
        .then((s) => {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(s));
        })
        .catch((e: Error) => {
          res.statusCode = 500;
          res.end(e.message);
        });
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const record: LabRecord = {
    pid: process.pid,
    controlUrl: `http://127.0.0.1:${port}`,
    inventory: lab.inventory,
    nodes: lab.nodes.length + lab.vms.length,
    started: Date.now(),
  };
  writeFileSync(labRecordFile(lab.dir), JSON.stringify(record, null, 2));
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    server.close();
    await lab.close();
    rmSync(labRecordFile(lab.dir), { force: true });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  // Tell `sim up` (our parent) that we are ready, then live on our own.
  process.send?.({ ready: true, record });
  process.disconnect?.();
}
