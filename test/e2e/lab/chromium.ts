// Debian's chromium, headless, driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: JSON messages ended by NUL on fds 3 and 4), so a test can load a
// page, type into it, read what it shows and take a screenshot, with no WebSocket and no port.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The chromium command on this machine, or undefined. */
export function findChromium(): string | undefined {
  for (const c of ['chromium', 'chromium-browser']) {
    if (spawnSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8' }).status === 0) return c;
  }
  return undefined;
}

/** `chromium --headless --dump-dom URL`: the DOM after the page's scripts ran at load. */
export function dumpDom(url: string, extra: string[] = []): string {
  const profile = mkdtempSync(join(tmpdir(), 'tsbm-chromium-'));
  try {
    const r = spawnSync(findChromium() ?? 'chromium', [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, ...extra, '--dump-dom', url], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      timeout: 60_000,
    });
    if (r.status !== 0) throw new Error(`chromium --dump-dom failed (${r.status}): ${r.stderr.slice(-2000)}`);
    return r.stdout;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

/** `chromium --headless --screenshot=FILE URL`. */
export function screenshot(url: string, file: string, size = '1400,1000'): void {
  const profile = mkdtempSync(join(tmpdir(), 'tsbm-chromium-'));
  try {
    const r = spawnSync(findChromium() ?? 'chromium', [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, `--window-size=${size}`, `--screenshot=${file}`, url], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (r.status !== 0) throw new Error(`chromium --screenshot failed (${r.status}): ${r.stderr.slice(-2000)}`);
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

interface Pending {
  resolve(v: Record<string, unknown>): void;
  reject(e: Error): void;
  method: string;
}

export interface CdpEvent {
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

/** One headless browser and a DevTools session on one page. */
export class Browser {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly waiters: Array<{ method: string; resolve(e: CdpEvent): void }> = [];
  readonly events: CdpEvent[] = [];
  private buffer = '';
  private sessionId: string | undefined;
  private exited: Promise<number | null>;
  stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
  ) {
    const out = child.stdio[4] as Readable;
    out.setEncoding('utf8');
    out.on('data', (d: string) => this.onData(d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-20_000);
    });
    this.exited = new Promise((res) => child.on('exit', (code) => res(code)));
    this.exited.then(() => {
      for (const p of this.pending.values()) p.reject(new Error(`chromium exited during ${p.method}: ${this.stderr.slice(-1000)}`));
      this.pending.clear();
    });
  }

  static async launch(windowSize = '1400,1000'): Promise<Browser> {
    const profile = mkdtempSync(join(tmpdir(), 'tsbm-chromium-'));
    const child = spawn(
      findChromium() ?? 'chromium',
      [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, `--window-size=${windowSize}`, '--remote-debugging-pipe', 'about:blank'],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    const b = new Browser(child, profile);
    const { targetId } = (await b.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await b.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
    b.sessionId = sessionId;
    for (const domain of ['Page', 'Runtime', 'Network']) await b.send(`${domain}.enable`);
    return b;
  }

  private onData(d: string): void {
    this.buffer += d;
    let end = this.buffer.indexOf('\0');
    while (end >= 0) {
      const msg = JSON.parse(this.buffer.slice(0, end)) as { id?: number; result?: Record<string, unknown>; error?: { message: string }; method?: string; params?: Record<string, unknown>; sessionId?: string };
      this.buffer = this.buffer.slice(end + 1);
      end = this.buffer.indexOf('\0');
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(`${p.method}: ${msg.error.message}`));
        else p?.resolve(msg.result ?? {});
      } else if (msg.method) {
        const e: CdpEvent = { method: msg.method, params: msg.params ?? {}, ...(msg.sessionId ? { sessionId: msg.sessionId } : {}) };
        this.events.push(e);
        for (let i = this.waiters.length - 1; i >= 0; i--) {
          if (this.waiters[i]!.method === e.method) this.waiters.splice(i, 1)[0]!.resolve(e);
        }
      }
    }
  }

  /** A DevTools command, on the page's session once there is one. */
  send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const msg = { id, method, params, ...(this.sessionId && !method.startsWith('Target.') && !method.startsWith('Browser.') ? { sessionId: this.sessionId } : {}) };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      (this.child.stdio[3] as Writable).write(`${JSON.stringify(msg)}\0`);
    });
  }

  waitFor(method: string, timeoutMs = 30_000): Promise<CdpEvent> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ${method} within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        method,
        resolve: (e) => {
          clearTimeout(t);
          resolve(e);
        },
      });
    });
  }

  async navigate(url: string): Promise<void> {
    const loaded = this.waitFor('Page.loadEventFired');
    await this.send('Page.navigate', { url });
    await loaded;
  }

  /** The value of a JavaScript expression in the page (thrown errors become test errors). */
  async evaluate<T>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true })) as {
      result: { value?: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails) throw new Error(`in page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value as T;
  }

  /** Types text into the focused element as keyboard input would (input events fire). */
  async type(text: string): Promise<void> {
    await this.send('Input.insertText', { text });
  }

  async key(key: string, code = key, keyCode = 0): Promise<void> {
    await this.send('Input.dispatchKeyEvent', { type: 'keyDown', key, code, windowsVirtualKeyCode: keyCode });
    await this.send('Input.dispatchKeyEvent', { type: 'keyUp', key, code, windowsVirtualKeyCode: keyCode });
  }

  async click(x: number, y: number): Promise<void> {
    for (const type of ['mousePressed', 'mouseReleased'])
      await this.send('Input.dispatchMouseEvent', { type, x, y, button: 'left', clickCount: 1 });
  }

  /** The page as shown, or only `clip` (CSS pixels, e.g. an element's getBoundingClientRect()). */
  async screenshotPng(clip?: { x: number; y: number; width: number; height: number }): Promise<Buffer> {
    const r = (await this.send('Page.captureScreenshot', {
      format: 'png',
      captureBeyondViewport: clip !== undefined,
      ...(clip ? { clip: { ...clip, scale: 1 } } : {}),
    })) as { data: string };
    return Buffer.from(r.data, 'base64');
  }

  async close(): Promise<void> {
    try {
      await Promise.race([this.send('Browser.close'), new Promise((r) => setTimeout(r, 5000))]);
    } catch {
      // already gone
    }
    const t = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(t);
    rmSync(this.profile, { recursive: true, force: true });
  }
}
