// Errors raised while a template runs. Helpers and lookups throw these; render.ts turns them into
// TsbmError 'template' with the task, host and position of the value being rendered.

/** A variable (or a key inside one) that does not exist. */
export class UndefinedVarFail extends Error {
  constructor(
    readonly path: string,
    readonly missing: string,
  ) {
    super(
      path === missing
        ? `undefined variable "${path}"`
        : `undefined variable "${path}" ("${missing}" is not defined)`,
    );
  }
}

/** A helper given bad input (bad regex, invalid JSON, unset env var ...). */
export class HelperFail extends Error {
  constructor(
    readonly helper: string,
    message: string,
    readonly hint?: string,
  ) {
    super(`${helper}: ${message}`);
  }
}
