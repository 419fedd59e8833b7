// A template-able value with where it came from. Strings stay raw until the executor renders them.
import type { SourcePos } from '../errors.js';

export interface Expr {
  expr: string;
  pos: SourcePos;
}
