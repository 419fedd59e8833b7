// The preflight's kickstart check for anaconda deploys: the node's kickstart rendered from its
// template with a stand-in callback (no token exists before the deploy), then checked as
// kickstart_media checks it. A template error or an unusable kickstart fails the node before
// anything is powered.
import { fileServerOptions } from '../../http/run-file-server.js';
import { anacondaHints, buildKickstart, KickstartPlanError, planSource } from './kickstart-plan.js';
import type { Problem } from '../../module-api/preflight-problem.js';
import { TsbmError } from '../../errors.js';
import type { ModuleContext } from '../../module-api/types.js';
import { kickstartTemplate } from './anaconda-shared.js';
import { ksUrlPath } from './ks-url-path.js';

const STANDIN = { url: 'http://tsbm.invalid:8080/install/000000000000000000000000', token: 'preflight-stand-in-token' };
const FIX = 'fix ks_template (playbooks/templates/ks.cfg.hbs shows the values and what tsbm needs)';

/** ks_url must be a path on tsbm's own server, which therefore needs a fixed address and port. */
function ksUrlProblem(ctx: ModuleContext, ksUrl: unknown): Problem | undefined {
  if (ksUrl === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(String(ksUrl));
  } catch {
    return { check: 'kickstart', message: `instance_info.ks_url ${JSON.stringify(ksUrl)} is not a URL`, fix: 'give http://ADDRESS:PORT/PATH on tsbm_http_address' };
  }
  const { host, port } = fileServerOptions(ctx.vars);
  const want = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (port === 0 || u.origin !== new URL(want).origin) {
    return {
      check: 'kickstart',
      message: `instance_info.ks_url ${u.href} is not on tsbm's HTTP server (${port === 0 ? `${host}, on a port chosen at run time` : want}), so tsbm cannot serve the kickstart there`,
      fix: 'set tsbm_http_address and tsbm_http_port to the address and port ks_url names (the installer ISO carries inst.ks= with that URL)',
    };
  }
  const p = ksUrlPath(u);
  if ('problem' in p) return { check: 'kickstart', message: `instance_info.ks_url ${u.href} cannot be the kickstart's URL: ${p.problem}`, fix: "give ks_url a path of its own on tsbm's HTTP server (e.g. /ks/NODE.cfg)" };
  return undefined;
}

export async function checkKickstartTemplate(ctx: ModuleContext, tlsVerify: boolean, ksUrl: unknown): Promise<string | Problem[]> {
  const problems: Problem[] = [];
  const urlProblem = ksUrlProblem(ctx, ksUrl);
  if (urlProblem) problems.push(urlProblem);
  let template: ReturnType<typeof kickstartTemplate>;
  try {
    template = kickstartTemplate(ctx, undefined);
  } catch (e) {
    if (!(e instanceof TsbmError)) throw e;
    return [...problems, { check: 'kickstart', message: e.message, fix: e.hint ?? FIX }];
  }
  try {
    anacondaHints(ctx.vars);
    const plan = planSource(ctx.vars, { tlsVerify }, (v) => void ctx.secret(v));
    // Not published before the deploy: a stand-in URL where a file:// image will be served.
    if (plan.source.file) plan.source.location = `http://tsbm.invalid:8080/files/0/${plan.source.file.split('/').pop() ?? 'image'}`;
    const built = await buildKickstart({
      vars: ctx.vars,
      host: ctx.host,
      task: ctx.task,
      template: template.text,
      templateFile: template.file,
      plan,
      callback: STANDIN,
      signal: ctx.signal,
      secret: (v) => void ctx.secret(v),
    });
    for (const m of built.problems) problems.push({ check: 'kickstart', message: `${template.file}: ${m}`, fix: FIX });
  } catch (e) {
    if (e instanceof KickstartPlanError) problems.push({ check: 'kickstart', message: e.message, fix: e.hint });
    else if (e instanceof TsbmError) problems.push({ check: 'kickstart', message: e.message, fix: e.hint ?? FIX });
    else throw e;
  }
  return problems.length ? problems : `kickstart from ${template.file} renders and checks`;
}
