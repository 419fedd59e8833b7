// --resume's extra vars: recorded by name and salted hash, never value; on resume -e @files are
// read again, inline values must be given again and are checked against the hashes; a
// missing or changed value is an options error naming the variables, never their values.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extraVarSources } from '../../src/run/extra-vars.js';
import { prepareResume, recordScope } from '../../src/run/resume.js';
import type { JournalContents } from '../../src/journal/reader.js';
import { baseOptions } from '../helpers/executor-model.js';
import { journalHeader } from '../helpers/journal-header.js';
import type { RunOptions } from '../../src/executor/options.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-resume-vars-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'vars.yml');

const PW = 'hunter2-not-in-any-journal';

async function journalOf(args: string[], o: Partial<RunOptions> = {}): Promise<JournalContents> {
  const sources = extraVarSources(args, dir);
  const scope = await recordScope(baseOptions(o), sources);
  return { file: join(dir, 'r.jsonl'), header: { ...journalHeader('20261201-000000-aaaa'), scope }, records: [], badLines: 0 };
}
const resume = (j: JournalContents, args: string[], o: Partial<RunOptions> = {}, force = false) =>
  prepareResume(j, baseOptions(o), extraVarSources(args, dir), force);

describe('resume: extra vars', () => {
  it('records names and hashes only', async () => {
    writeFileSync(file, `image: oci://r/os:1\npull_token: ${PW}-file\n`);
    const j = await journalOf([`bmc_pw=${PW}`, `@${file}`, `{"extra": {"k": "${PW}-json"}}`]);
    const text = JSON.stringify(j.header);
    expect(text).not.toContain(PW);
    expect(j.header!.scope!.extraVars.sources).toEqual([{ inline: ['bmc_pw'] }, { file, names: ['image', 'pull_token'] }, { inline: ['extra'] }]);
    expect(Object.keys(j.header!.scope!.extraVars.hashes)).toEqual(['bmc_pw', 'extra', 'image', 'pull_token']);
  });

  it('re-reads files and takes inline values given again', async () => {
    writeFileSync(file, 'image: oci://r/os:1\n');
    const j = await journalOf([`bmc_pw=${PW}`, `@${file}`], { limit: 'node01', check: true });
    const r = await resume(j, [`bmc_pw=${PW}`]);
    expect(r.opts.extraVars).toEqual({ bmc_pw: PW, image: 'oci://r/os:1' });
    expect(r.opts.limit).toBe('node01');
    expect(r.opts.check).toBe(true);
    expect(r.notes.join(' ')).toMatch(/with its options: --limit "node01" --check/);
    // the whole command line again is fine too
    expect((await resume(j, [`bmc_pw=${PW}`, `@${file}`])).opts.extraVars).toEqual({ bmc_pw: PW, image: 'oci://r/os:1' });
  });

  it('an inline value not given again is asked for by name, never shown', async () => {
    const j = await journalOf([`bmc_pw=${PW}`, `token=${PW}2`]);
    const err = await resume(j, []).catch((e: Error) => e);
    expect(err).toMatchObject({ kind: 'options', message: expect.stringMatching(/needs the values of bmc_pw, token again/) });
    expect(String((err as Error).message)).not.toContain(PW);
  });

  it('a value overridden by a later file need not be given again', async () => {
    writeFileSync(file, 'image: from-file\n');
    const j = await journalOf(['image=inline', `@${file}`]);
    expect((await resume(j, [])).opts.extraVars).toEqual({ image: 'from-file' });
  });

  it('a different value (typed, or a file changed since) is refused by name; --force accepts it', async () => {
    writeFileSync(file, 'image: one\n');
    const j = await journalOf([`bmc_pw=${PW}`, `@${file}`]);
    const typo = await resume(j, [`bmc_pw=${PW}x`]).catch((e: Error) => e);
    expect(typo).toMatchObject({ kind: 'options', message: expect.stringMatching(/the values of bmc_pw differ from run/) });
    expect(String((typo as Error).message)).not.toContain(PW);
    writeFileSync(file, 'image: two\n');
    await expect(resume(j, [`bmc_pw=${PW}`])).rejects.toThrow(/the values of image differ/);
    const forced = await resume(j, [`bmc_pw=${PW}`], {}, true);
    expect(forced.opts.extraVars.image).toBe('two');
    expect(forced.notes.join(' ')).toMatch(/--force: the values of image differ/);
  });

  it('a variable the run did not have is refused unless --force', async () => {
    const j = await journalOf([]);
    await expect(resume(j, ['new_var=1'])).rejects.toThrow(/new_var was not set in run/);
    expect((await resume(j, ['new_var=1'], {}, true)).opts.extraVars).toEqual({ new_var: '1' });
  });

  it('a file that cannot be read any more is an options error', async () => {
    const gone = join(dir, 'gone.yml');
    writeFileSync(gone, 'a: 1\n');
    const j = await journalOf([`@${gone}`]);
    rmSync(gone);
    await expect(resume(j, [])).rejects.toMatchObject({ kind: 'options', message: expect.stringMatching(/gone\.yml, which cannot be read now/) });
  });

  it('other options than the run had are refused, naming each', async () => {
    const j = await journalOf([], { limit: 'node01' });
    await expect(resume(j, [], { limit: 'node02', check: true })).rejects.toThrow(
      /cannot resume run 20261201-000000-aaaa with other options: --limit "node02" \(the run had "node01"\); --check/,
    );
  });
});
