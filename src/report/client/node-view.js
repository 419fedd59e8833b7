// @ts-check
// One node's tasks: outcome, time, retries, message, and the module result (as redacted in
// the run journal) behind a disclosure.

/**
 * @param {RunReport} report
 * @param {Host | undefined} host
 * @param {Entry | undefined} focus
 * @param {() => void} close
 */
function renderNode(report, host, focus, close) {
  const box = byId('node');
  if (!host) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  const chain = report.runs.length > 1;
  const closeBtn = el('button', { type: 'button', class: 'close', title: 'close', text: '×' });
  closeBtn.addEventListener('click', close);
  /** @type {Record<string, number>} */
  const counts = {};
  for (const e of host.entries) counts[e.status] = (counts[e.status] || 0) + 1;
  const head = el('div', { class: 'node-head' }, [
    el('h2', {}, [host.name, ' ', badge(host.state)]),
    closeBtn,
    el('p', {}, [
      `${fmtDuration(host.total)} in tasks`,
      host.retries ? `, ${host.retries} retr${host.retries === 1 ? 'y' : 'ies'}` : '',
      ' · ',
      ...Object.entries(counts).flatMap(([k, n]) => [badge(k), ` ${n} `]),
    ]),
    host.failure ? el('p', { class: 'failure' }, [host.failure.task >= 0 ? `${report.tasks[host.failure.task].name}: ` : '', host.failure.msg]) : undefined,
    host.node ? el('p', { class: 'node-state' }, [`node: ${host.node}`]) : undefined,
    host.warnings.length ? el('ul', { class: 'warnings' }, host.warnings.map((w) => el('li', { text: w }))) : undefined,
  ]);
  const cols = [chain ? 'run' : '', 'task', 'phase', 'outcome', 'start', 'time', 'retries', 'message'].filter(Boolean);
  const rows = host.entries.map((e) => {
    const run = report.runs[e.run];
    const detail = [];
    if (e.items) detail.push(el('div', { text: `${e.items} loop item${e.items === 1 ? '' : 's'}` }));
    if (e.retryMsg) detail.push(el('div', { text: `last retry: ${e.retryMsg}` }));
    if (e.result >= 0) {
      const d = el('details', {}, [el('summary', { text: 'result' })]);
      // built when opened: a node with many tasks opens at once
      d.addEventListener('toggle', () => {
        if (!d.querySelector('pre')) d.append(el('pre', { text: JSON.stringify(report.result(e.result), null, 2) }));
      });
      detail.push(d);
    }
    const tr = el('tr', { class: `entry st-${e.status}${e === focus ? ' focus' : ''}` }, [
      chain ? el('td', { class: 'num', text: e.run + 1, title: run.id }) : undefined,
      el('td', { text: report.tasks[e.task].name }),
      el('td', { text: report.tasks[e.task].phase }),
      el('td', {}, [badge(e.status)]),
      el('td', { class: 'num', text: `+${fmtDuration(Math.max(0, e.start - run.offsetMs))}` }),
      el('td', { class: 'num', text: fmtDuration(e.dur) }),
      el('td', { class: 'num', text: e.retries || '' }),
      el('td', { class: 'msg' }, [e.msg || '', ...detail]),
    ]);
    return tr;
  });
  box.replaceChildren(head, el('table', { class: 'entries' }, [el('tr', {}, cols.map((c) => el('th', { text: c }))), ...rows]));
  box.hidden = false;
  const target = box.querySelector('tr.focus') || box;
  target.scrollIntoView({ block: 'nearest' });
}
