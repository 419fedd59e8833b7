// Finds a controller-side file named by a task (copy src, template src): absolute as given,
// else the role's files/ or templates/ dir, the role dir, then the playbook's.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { TsbmError } from '../errors.js';
import type { ModuleContext } from './types.js';

export function findControllerFile(ctx: ModuleContext, src: string, kind: 'files' | 'templates'): string {
  if (path.isAbsolute(src)) {
    if (existsSync(src)) return src;
    throw notFound(ctx, src, [src]);
  }
  const rolePath = typeof ctx.vars.role_path === 'string' ? ctx.vars.role_path : undefined;
  const bases = [
    ...(rolePath ? [path.join(rolePath, kind), rolePath] : []),
    path.join(ctx.services.playbookDir, kind),
    ctx.services.playbookDir,
  ];
  const tried = bases.map((b) => path.join(b, src));
  const hit = tried.find((p) => existsSync(p));
  if (hit) return hit;
  throw notFound(ctx, src, tried);
}

function notFound(ctx: ModuleContext, src: string, tried: string[]): TsbmError {
  return new TsbmError('runtime', `source file ${src} not found on the controller`, {
    host: ctx.host,
    task: ctx.task,
    hint: `looked in: ${tried.join(', ')}`,
  });
}
