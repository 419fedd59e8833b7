// Ansible Vault 1.1 and 1.2, read from files ansible-vault made (test/fixtures/vault): the
// envelope, the decryption, the keyring's order and errors, and the YAML loader's `!vault`
// scalars and wholly vaulted files.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { parseExtraVarsArg } from '../../src/run/extra-vars.js';
import { parseYamlText } from '../../src/schema/yaml-source.js';
import { decryptEnvelope } from '../../src/vault/decrypt.js';
import { isVaulted, parseEnvelope } from '../../src/vault/format.js';
import { type VaultSecret, VaultKeyring, vaultKeyring } from '../../src/vault/keyring.js';
import { parseVaultId, passwordFromFile } from '../../src/vault/sources.js';
import { scratchDirs } from '../helpers/scratch.js';
import { thrownBy } from '../helpers/thrown.js';

const fixtures = resolve(import.meta.dirname, '../fixtures/vault');
const read = (f: string) => readFileSync(join(fixtures, f), 'utf8');
const pw = (label: string, text: string, source = `${label}-file`): VaultSecret => ({ label, password: Buffer.from(text), source });
const MAIN = pw('default', 'correct horse battery');
const DEV = pw('dev', 'dev-only pass');
const scratch = scratchDirs();

/** The vault text of a `name: !vault |` fixture, as the YAML scalar holds it. */
function scalarOf(file: string): string {
  return read(file)
    .split('\n')
    .slice(1)
    .map((l) => l.trim())
    .join('\n');
}

afterEach(() => vaultKeyring.set([]));

describe('the envelope and the cipher', () => {
  it('reads 1.1 and 1.2 headers (with the vault id) and decrypts with the right password only', () => {
    const v11 = parseEnvelope(scalarOf('string-1.1.yml'));
    expect(v11.version).toBe('1.1');
    expect(v11.label).toBeUndefined();
    expect(decryptEnvelope(v11, MAIN.password)?.toString()).toBe('Sup3r-BMC-pw!');
    expect(decryptEnvelope(v11, DEV.password)).toBeUndefined();
    const v12 = parseEnvelope(scalarOf('string-1.2-dev.yml'));
    expect(v12).toMatchObject({ version: '1.2', label: 'dev' });
    expect(decryptEnvelope(v12, DEV.password)?.toString()).toBe('dev-token-value');
  });

  it('a whole file: its plaintext byte for byte', () => {
    const text = read('file-1.1.yml');
    expect(isVaulted(text)).toBe(true);
    expect(decryptEnvelope(parseEnvelope(text), MAIN.password)?.toString()).toBe(
      'redfish_password: "file-level-pw-42"\nmulti: |\n  line one\n  line two ü\nport: 6230\n',
    );
  });

  it('refuses what is not a vault it can read, saying why', () => {
    expect(() => parseEnvelope('$ANSIBLE_VAULT;1.0;AES\n00')).toThrow(/vault format 1.0 is not supported/);
    expect(() => parseEnvelope('$ANSIBLE_VAULT;1.1;AES512\n00')).toThrow(/cipher AES512 is not supported/);
    expect(() => parseEnvelope('$ANSIBLE_VAULT;1.2;AES256\n00')).toThrow(/names its vault id/);
    expect(() => parseEnvelope('$ANSIBLE_VAULT;1.1;AES256\nzz')).toThrow(/not hexadecimal/);
    expect(() => parseEnvelope('$ANSIBLE_VAULT;1.1;AES256\n6162')).toThrow(/salt, HMAC and ciphertext/);
  });
});

describe('the keyring', () => {
  const at = { file: 'vars.yml', line: 3, col: 7 };

  it('without a password: an error at the value naming the options to give', () => {
    const k = new VaultKeyring();
    const e = thrownBy(() => k.decrypt(scalarOf('string-1.1.yml'), at, 'vaulted value'));
    expect(e).toBeInstanceOf(TsbmError);
    expect((e as TsbmError).exitCode).toBe(4);
    expect((e as TsbmError).oneLine()).toMatch(/^vars\.yml:3:7: the vaulted value needs a vault password, and none was given \(give the vault password with --vault-password-file/);
  });

  it('tries the vault id of a 1.2 vault first, then the others; a wrong password names what was tried, never the password', () => {
    const k = new VaultKeyring();
    const seen: string[] = [];
    k.onPlaintext((t) => seen.push(t));
    k.set([MAIN, DEV]);
    expect(k.decrypt(scalarOf('string-1.2-dev.yml'), at, 'vaulted value')).toBe('dev-token-value');
    // an unlabelled password opens a 1.2 vault too, when it is the right one (Ansible tries them all)
    k.set([pw('other', 'nope'), pw('default', 'dev-only pass')]);
    expect(k.decrypt(scalarOf('string-1.2-dev.yml'), at, 'vaulted value')).toBe('dev-token-value');
    expect(seen).toEqual(['dev-token-value', 'dev-token-value']);
    k.set([pw('default', 'wrong one', '--vault-password-file wrong.txt')]);
    const e = thrownBy(() => k.decrypt(scalarOf('string-1.2-dev.yml'), at, 'vaulted value'));
    const line = (e as TsbmError).oneLine();
    expect(line).toContain('cannot decrypt the vaulted value: no vault password given opens it (tried --vault-password-file wrong.txt)');
    expect(line).toContain('encrypted with vault id "dev"');
    expect(line).toContain('--vault-id dev@FILE');
    expect(line).not.toContain('wrong one');
  });
});

describe('YAML with vaulted values', () => {
  it('`!vault` scalars become their plaintext, announced as secrets; plain values stay', () => {
    vaultKeyring.set([MAIN, DEV]);
    const seen: string[] = [];
    vaultKeyring.onPlaintext((t) => seen.push(t));
    const text = `${read('string-1.1.yml')}\n${read('string-1.2-dev.yml')}\nplain: visible\n`;
    const src = parseYamlText(text, 'vars.yml');
    expect(src.value).toEqual({ bmc_password: 'Sup3r-BMC-pw!', dev_token: 'dev-token-value', plain: 'visible' });
    expect(seen).toContain('Sup3r-BMC-pw!');
    expect(seen).toContain('dev-token-value');
    expect(seen).not.toContain('visible');
    // positions still point into the file
    expect(src.pos(['plain'])).toMatchObject({ file: 'vars.yml', line: 15 });
  });

  it('a wholly vaulted file is its plaintext, every value in it a secret', () => {
    vaultKeyring.set([MAIN]);
    const seen: string[] = [];
    vaultKeyring.onPlaintext((t) => seen.push(t));
    const src = parseYamlText(read('file-1.1.yml'), 'group_vars/all.yml');
    expect(src.value).toEqual({ redfish_password: 'file-level-pw-42', multi: 'line one\nline two ü\n', port: 6230 });
    expect(seen).toEqual(expect.arrayContaining(['file-level-pw-42', 'line one\nline two ü\n', '6230']));
  });

  it('without a password: the error names the file and the line of the value', () => {
    const text = `first: 1\n${read('string-1.1.yml')}\n`;
    expect(() => parseYamlText(text, 'group_vars/all.yml')).toThrow(TsbmError);
    const e = thrownBy(() => parseYamlText(text, 'group_vars/all.yml'));
    expect((e as TsbmError).oneLine()).toMatch(/^group_vars\/all\.yml:2:22: the vaulted value \(!vault\) needs a vault password/);
    const e2 = thrownBy(() => parseYamlText(read('file-1.1.yml'), 'host_vars/node1.yml'));
    expect((e2 as TsbmError).oneLine()).toMatch(/^host_vars\/node1\.yml:1:1: the vaulted file needs a vault password/);
  });

  it('an inline -e object may hold a `!vault` value (flow style); without a password it is an -e error', () => {
    const quoted = JSON.stringify(scalarOf('string-1.1.yml'));
    expect(() => parseExtraVarsArg(`{"bmc_password": !vault ${quoted}}`)).toThrow(/^in --extra-vars: the vaulted value \(!vault\) needs a vault password/);
    vaultKeyring.set([MAIN]);
    expect(parseExtraVarsArg(`{"bmc_password": !vault ${quoted}}`)).toEqual({ bmc_password: 'Sup3r-BMC-pw!' });
  });

  it('`!vault` on a mapping is refused at its position', () => {
    vaultKeyring.set([MAIN]);
    expect(() => parseYamlText('a: 1\nb: !vault {x: 1}\n', 'v.yml')).toThrow(/v\.yml|!vault tags a text value/);
    const e = thrownBy(() => parseYamlText('a: 1\nb: !vault {x: 1}\n', 'v.yml'));
    expect((e as TsbmError).pos).toMatchObject({ line: 2 });
  });
});

describe('password sources', () => {
  it('vault ids: LABEL@SOURCE or SOURCE', () => {
    expect(parseVaultId('dev@~/pw')).toEqual({ label: 'dev', source: '~/pw' });
    expect(parseVaultId('pw.txt')).toEqual({ label: 'default', source: 'pw.txt' });
    expect(parseVaultId('prod@prompt')).toEqual({ label: 'prod', source: 'prompt' });
    expect(() => parseVaultId('@pw')).toThrow(/LABEL@SOURCE/);
  });

  it('a file (trimmed), a script, a client script asked for its id; errors for missing, empty, failing', () => {
    const d = scratch('tsbm-vaultsrc-');
    writeFileSync(join(d, 'pw'), '  s3cret \n');
    expect(passwordFromFile(join(d, 'pw'), 'default').password.toString()).toBe('s3cret');
    writeFileSync(join(d, 'script'), '#!/bin/sh\necho from-script\n');
    chmodSync(join(d, 'script'), 0o755);
    expect(passwordFromFile(join(d, 'script'), 'default').password.toString()).toBe('from-script');
    writeFileSync(join(d, 'keys-client.sh'), '#!/bin/sh\necho "id=$2"\n');
    chmodSync(join(d, 'keys-client.sh'), 0o755);
    expect(passwordFromFile(join(d, 'keys-client.sh'), 'prod').password.toString()).toBe('id=prod');
    expect(() => passwordFromFile(join(d, 'missing'), 'default')).toThrow(/vault password file .*missing not found/);
    writeFileSync(join(d, 'empty'), '\n');
    expect(() => passwordFromFile(join(d, 'empty'), 'default')).toThrow(/is empty/);
    writeFileSync(join(d, 'bad'), '#!/bin/sh\necho oops >&2\nexit 3\n');
    chmodSync(join(d, 'bad'), 0o755);
    expect(() => passwordFromFile(join(d, 'bad'), 'default')).toThrow(/vault password script .*bad failed \(exit 3\): oops/);
  });
});
