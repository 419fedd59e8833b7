import type { SourcePos } from '../errors.js';
import type { Vars } from '../types.js';

/** What templating needs to know to render and to report errors precisely. */
export interface TemplateContext {
  vars: Vars;
  pos?: SourcePos;
  task?: string;
  host?: string;
  /** Directory `file PATH` resolves against. */
  baseDir: string;
  /** Called with every value the `secret` helper marks (and by default for secret-named vars). */
  onSecret?: (value: string) => void;
}
