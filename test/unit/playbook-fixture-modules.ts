// Stand-in modules for loader tests, so they do not depend on which real modules exist.
import { Type } from '@sinclair/typebox';
import { defineModule, type ModuleDef } from '../../src/module-api/types.js';

const run = async () => ({ changed: false });

export const fixtureModules: ModuleDef[] = [
  defineModule({
    name: 'command',
    summary: 'Run a command',
    runsOn: 'target',
    checkMode: false,
    example: '- command: ls -l',
    freeForm: 'cmd',
    args: Type.Object(
      { cmd: Type.String(), chdir: Type.Optional(Type.String()) },
      { additionalProperties: false },
    ),
    run,
  }),
  defineModule({
    name: 'debug',
    summary: 'Print a message',
    runsOn: 'controller',
    checkMode: true,
    example: '- debug: {msg: hi}',
    args: Type.Object(
      { msg: Type.Optional(Type.String()), var: Type.Optional(Type.String()) },
      { additionalProperties: false },
    ),
    run,
  }),
  defineModule({
    name: 'redfish_power',
    summary: 'Power a node',
    runsOn: 'controller',
    checkMode: true,
    example: '- redfish_power: {state: off}',
    args: Type.Object(
      {
        state: Type.Union([Type.Literal('on'), Type.Literal('off'), Type.Literal('reset')]),
        timeout: Type.Optional(Type.Integer({ minimum: 1 })),
        wait: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
    run,
  }),
  defineModule({
    name: 'set_fact',
    summary: 'Set variables',
    runsOn: 'controller',
    checkMode: true,
    example: '- set_fact: {a: 1}',
    args: Type.Record(Type.String(), Type.Unknown()),
    run,
  }),
  defineModule({
    name: 'fail',
    summary: 'Fail',
    runsOn: 'controller',
    checkMode: true,
    example: '- fail: {msg: no}',
    args: Type.Object({ msg: Type.Optional(Type.String()) }, { additionalProperties: false }),
    run,
  }),
];

export const fixtureLookup = {
  getModule: (n: string) => fixtureModules.find((m) => m.name === n),
  moduleNames: () => fixtureModules.map((m) => m.name),
};
