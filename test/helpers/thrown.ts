// What a call threw, for assertions outside the `catch`: an assertion only inside a catch passes
// when nothing throws (and `expect.unreachable()` inside the try is caught by that very catch).
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to throw; it returned');
}

/** What a promise rejected with; fails when it resolves. */
export async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the promise to reject; it resolved');
}
