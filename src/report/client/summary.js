// @ts-check
// The summary at the top of the report: what happened at a glance, with links into the
// timeline and node view.

const FAILURE_GROUPS_SHOWN = 8;

/** @param {number} n */
function moreButton(n) {
  const b = el('button', { type: 'button', class: 'linkish', text: `show ${n} more groups` });
  b.addEventListener('click', () => {
    byId('failures').classList.add('all');
    b.remove();
  });
  return b;
}

/**
 * A group's cause: the first lines of one node's message, the whole of it (and how the node's
 * rescue ended it) on demand.
 * @param {RunReport} report
 * @param {FailureGroup} g
 */
function causeCell(report, g) {
  const td = el('td', { class: 'msg cause' }, [
    el('div', { class: 'clamp', text: g.example }),
    el('div', { class: 'whole' }, [
      el('div', { class: 'note', text: `as ${g.exampleHost} said it` }),
      g.ended ? el('div', { class: 'then', text: `then ${report.tasks[g.ended.task].name}: ${g.ended.msg}` }) : undefined,
    ]),
  ]);
  const toggle = el('button', { type: 'button', class: 'linkish', text: 'whole message' });
  toggle.addEventListener('click', () => {
    const open = td.classList.toggle('open');
    toggle.textContent = open ? 'less' : 'whole message';
  });
  td.append(toggle);
  return td;
}

/**
 * @param {RunReport} report
 * @param {{ select: (name: string) => void, showHosts: (label: string, names: string[]) => void }} act
 */
function renderSummary(report, act) {
  const s = report.summary;
  const last = report.runs[report.runs.length - 1];
  /** @param {string} name @param {boolean} [markOk] a failure the node got past (a resume, a rescue) */
  const hostLink = (name, markOk) => {
    const h = report.byName.get(name);
    const recovered = markOk && h && h.state === 'ok';
    const a = el('a', {
      href: `#node=${encodeURIComponent(name)}`,
      class: `host-link${recovered ? ' recovered' : ''}`,
      text: recovered ? `${name} ✓` : name,
      title: recovered ? `${name} is ok in the end` : undefined,
    });
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      act.select(name);
    });
    return a;
  };
  /**
   * @param {string} label
   * @param {string | number} value
   * @param {string} [cls]
   */
  const card = (label, value, cls) => el('div', { class: `card ${cls || ''}` }, [el('div', { class: 'v', text: value }), el('div', { class: 'k', text: label })]);
  const total = report.hosts.length;
  const cards = el('div', { class: 'cards', id: 'cards' }, [
    card('nodes', total),
    card('ok', s.hosts.ok || 0, 'st-ok'),
    card('failed', s.hosts.failed || 0, s.hosts.failed ? 'st-failed' : ''),
    card('unreachable', s.hosts.unreachable || 0, s.hosts.unreachable ? 'st-unreachable' : ''),
    card('unfinished', s.hosts.unfinished || 0, s.hosts.unfinished ? 'st-unfinished' : ''),
    card('wall time', fmtDuration(s.wallMs)),
    card('retries', s.retries),
    card(last.finished ? 'exit code' : 'run', last.finished ? String(last.exitCode) : 'did not finish', last.finished && last.exitCode === 0 ? 'st-ok' : 'st-failed'),
  ]);
  const results = el(
    'p',
    { class: 'results' },
    Object.entries(s.results)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => el('span', { class: 'res' }, [badge(k), ` ${n}`])),
  );

  /** @type {HTMLElement[]} */
  const blocks = [];
  if (report.runs.length > 1) {
    blocks.push(
      el('div', { class: 'block wide' }, [
        el('h3', { text: 'Runs (a resumed run shows the runs it continued)' }),
        el('table', {}, [
          el('tr', {}, ['#', 'run', 'started', 'duration', 'outcome'].map((t) => el('th', { text: t }))),
          ...report.runs.map((r, i) =>
            el('tr', {}, [
              el('td', { text: i + 1 }),
              el('td', { text: r.id }),
              el('td', { text: fmtTime(r.started) }),
              el('td', { text: fmtDuration(r.durationMs) }),
              el('td', { text: r.finished ? `exit ${r.exitCode}` : 'did not finish' }),
            ]),
          ),
        ]),
      ]),
    );
  }
  if (s.failures.length) {
    blocks.push(
      el('div', { class: 'block wide', id: 'failures' }, [
        el('h3', { text: `Failures, by the step that failed and the cause (${s.failures.length})` }),
        el('table', {}, [
          el('tr', {}, ['nodes', 'step that failed', 'cause', 'which'].map((t) => el('th', { text: t }))),
          ...s.failures.map((g, i) => {
            const show = el('button', { type: 'button', class: 'linkish', text: 'show in timeline' });
            show.addEventListener('click', () => act.showHosts(`${report.tasks[g.task].name}: ${g.pattern}`, g.hosts));
            const step = report.tasks[g.task];
            return el('tr', { class: `failure-group${i >= FAILURE_GROUPS_SHOWN ? ' more' : ''}` }, [
              el('td', { class: 'num', text: g.hosts.length }),
              el('td', {}, [step.name, el('div', { class: 'note', text: step.phase })]),
              causeCell(report, g),
              el('td', {}, [
                ...g.hosts.slice(0, 8).flatMap((h) => [hostLink(h, true), ' ']),
                g.hosts.length > 8 ? `+${g.hosts.length - 8} more ` : '',
                show,
              ]),
            ]);
          }),
        ]),
        s.failures.length > FAILURE_GROUPS_SHOWN ? moreButton(s.failures.length - FAILURE_GROUPS_SHOWN) : undefined,
      ]),
    );
  }
  const maxPhase = Math.max(1, ...s.phases.map((p) => p.maxMs));
  blocks.push(
    el('div', { class: 'block' }, [
      el('h3', { text: 'Phases (time each node spent in a role)' }),
      el('table', { id: 'phases' }, [
        el('tr', {}, ['phase', 'nodes', 'median', 'p95', 'max', 'slowest node'].map((t) => el('th', { text: t }))),
        ...s.phases.map((p) =>
          el('tr', {}, [
            el('td', {}, [p.phase, el('div', { class: 'meter', style: `width:${Math.round((100 * p.medianMs) / maxPhase)}%` })]),
            el('td', { class: 'num', text: p.nodes }),
            el('td', { class: 'num', text: fmtDuration(p.medianMs) }),
            el('td', { class: 'num', text: fmtDuration(p.p95Ms) }),
            el('td', { class: 'num', text: fmtDuration(p.maxMs) }),
            el('td', {}, [hostLink(p.slowestHost)]),
          ]),
        ),
      ]),
    ]),
  );
  blocks.push(
    el('div', { class: 'block' }, [
      el('h3', { text: 'Slowest nodes' }),
      el('table', {}, [
        el('tr', {}, ['node', 'time in tasks'].map((t) => el('th', { text: t }))),
        ...s.slowestHosts.map((h) => el('tr', {}, [el('td', {}, [hostLink(h.host)]), el('td', { class: 'num', text: fmtDuration(h.totalMs) })])),
      ]),
    ]),
  );
  if (s.retriedHosts.length) {
    blocks.push(
      el('div', { class: 'block', id: 'retries' }, [
        el('h3', { text: `Retries (${s.retries} on ${report.hosts.filter((h) => h.retries > 0).length} nodes)` }),
        el('table', {}, [
          el('tr', {}, ['node', 'retries', 'last reason'].map((t) => el('th', { text: t }))),
          ...s.retriedHosts.map((h) =>
            el('tr', {}, [el('td', {}, [hostLink(h.host)]), el('td', { class: 'num', text: h.retries }), el('td', { class: 'msg' }, [el('div', { class: 'clamp', text: h.last, title: h.last })])]),
          ),
        ]),
      ]),
    );
  }
  if (report.warnings.length) {
    blocks.push(
      el('div', { class: 'block wide' }, [el('h3', { text: 'Warnings' }), el('ul', {}, report.warnings.map((w) => el('li', { text: w })))]),
    );
  }
  byId('summary').replaceChildren(cards, results, el('div', { class: 'blocks' }, blocks));
}
