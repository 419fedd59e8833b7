// @ts-check
// Wires the page: filters (search, node state, a failure group), sort, row density, the node
// view, and the address bar (#q=...&state=...&sort=...&node=...) so a view can be shared.

const STATE_FILTERS = ['failed', 'unreachable', 'unfinished', 'ok', 'retried'];

function main() {
  const report = loadReport();
  const view = {
    query: '',
    /** @type {Set<string>} */
    states: new Set(),
    sort: 'name',
    density: 'auto',
    /** @type {{ label: string, hosts: Set<string> } | undefined} */
    group: undefined,
    /** @type {string | undefined} */
    node: undefined,
  };

  const search = /** @type {HTMLInputElement} */ (byId('search'));
  const sortSel = /** @type {HTMLSelectElement} */ (byId('sort'));
  const densitySel = /** @type {HTMLSelectElement} */ (byId('density'));
  const count = byId('count');
  const chips = byId('state-filters');
  const groupBox = byId('group-filter');

  renderHeader(report);
  for (const p of report.summary.phases) sortSel.append(el('option', { value: `phase:${p.phase}`, text: `time in ${p.phase} (longest first)` }));
  /** @type {Record<string, HTMLButtonElement>} */
  const chipOf = {};
  for (const st of STATE_FILTERS) {
    const n = st === 'retried' ? report.hosts.filter((h) => h.retries > 0).length : report.summary.hosts[st] || 0;
    const b = /** @type {HTMLButtonElement} */ (el('button', { type: 'button', class: `chip st-${st}`, 'data-state': st, 'aria-pressed': 'false', text: `${st} ${n}` }));
    b.addEventListener('click', () => {
      if (view.states.has(st)) view.states.delete(st);
      else view.states.add(st);
      update();
    });
    chipOf[st] = b;
    chips.append(b);
  }

  const timeline = createTimeline(report, {
    onSelect: (host, entry) => {
      view.node = host.name;
      renderNode(report, host, entry, closeNode);
      writeHash();
    },
  });

  function closeNode() {
    view.node = undefined;
    renderNode(report, undefined, undefined, closeNode);
    writeHash();
  }

  /** @param {string} name */
  function select(name) {
    const h = report.byName.get(name);
    if (!h) return;
    view.node = name;
    renderNode(report, h, undefined, closeNode);
    writeHash();
  }

  /** @param {Host} h */
  function matches(h) {
    if (view.group && !view.group.hosts.has(h.name)) return false;
    if (view.states.size) {
      const ok = (view.states.has(h.state) || (view.states.has('retried') && h.retries > 0));
      if (!ok) return false;
    }
    if (view.query) {
      for (const term of view.query.toLowerCase().split(/\s+/)) if (term && !h.haystack.includes(term)) return false;
    }
    return true;
  }

  const STATE_ORDER = { failed: 0, unreachable: 1, unfinished: 2, ok: 3 };
  /** @param {Host[]} list */
  function sorted(list) {
    const byName = (/** @type {Host} */ a, /** @type {Host} */ b) => a.index - b.index;
    const s = view.sort;
    if (s === 'duration') return list.sort((a, b) => b.total - a.total || byName(a, b));
    if (s === 'duration-asc') return list.sort((a, b) => a.total - b.total || byName(a, b));
    if (s === 'start') return list.sort((a, b) => a.start - b.start || byName(a, b));
    if (s === 'retries') return list.sort((a, b) => b.retries - a.retries || byName(a, b));
    if (s === 'state')
      return list.sort(
        (a, b) =>
          /** @type {Record<string, number>} */ (STATE_ORDER)[a.state] - /** @type {Record<string, number>} */ (STATE_ORDER)[b.state] ||
          byName(a, b),
      );
    if (s.startsWith('phase:')) {
      const p = s.slice(6);
      return list.sort((a, b) => (b.phaseMs.get(p) || 0) - (a.phaseMs.get(p) || 0) || byName(a, b));
    }
    return list.sort(byName);
  }

  /** @param {number} n */
  function rowHeight(n) {
    if (view.density !== 'auto') return Number(view.density);
    return n <= 60 ? 20 : n <= 300 ? 8 : 3;
  }

  function update() {
    const list = sorted(report.hosts.filter(matches));
    count.textContent = `${list.length} of ${report.hosts.length} nodes`;
    count.dataset.shown = String(list.length);
    for (const [st, b] of Object.entries(chipOf)) b.setAttribute('aria-pressed', String(view.states.has(st)));
    groupBox.hidden = !view.group;
    const groupText = groupBox.querySelector('span');
    if (view.group && groupText) groupText.textContent = `only the ${view.group.hosts.size} nodes of: ${view.group.label}`;
    timeline.setRows(list, rowHeight(list.length));
    writeHash();
  }

  function writeHash() {
    const p = new URLSearchParams();
    if (view.query) p.set('q', view.query);
    if (view.states.size) p.set('state', [...view.states].join(','));
    if (view.sort !== 'name') p.set('sort', view.sort);
    if (view.density !== 'auto') p.set('rows', view.density);
    if (view.node) p.set('node', view.node);
    const h = p.toString();
    if (h !== location.hash.slice(1)) history.replaceState(null, '', h ? `#${h}` : location.pathname + location.search);
  }

  function readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    view.query = p.get('q') || '';
    view.states = new Set((p.get('state') || '').split(',').filter((s) => STATE_FILTERS.includes(s)));
    const sort = p.get('sort') || 'name';
    view.sort = [...sortSel.options].some((o) => o.value === sort) ? sort : 'name';
    const rows = p.get('rows') || 'auto';
    view.density = [...densitySel.options].some((o) => o.value === rows) ? rows : 'auto';
    view.node = p.get('node') || undefined;
    search.value = view.query;
    sortSel.value = view.sort;
    densitySel.value = view.density;
  }

  search.addEventListener('input', () => {
    view.query = search.value.trim();
    update();
  });
  sortSel.addEventListener('change', () => {
    view.sort = sortSel.value;
    update();
  });
  densitySel.addEventListener('change', () => {
    view.density = densitySel.value;
    update();
  });
  byId('group-clear').addEventListener('click', () => {
    view.group = undefined;
    update();
  });

  renderSummary(report, {
    select,
    showHosts: (label, names) => {
      view.group = { label, hosts: new Set(names) };
      update();
      byId('timeline').scrollIntoView({ block: 'start' });
    },
  });
  readHash();
  update();
  if (view.node) select(view.node);
  document.body.dataset.ready = 'true';
}

/** @param {RunReport} report */
function renderHeader(report) {
  const last = report.runs[report.runs.length - 1];
  const first = report.runs[0];
  const opts = Object.entries(last.options).map(([k, v]) => `${k}: ${v}`);
  byId('head').replaceChildren(
    el('h1', {}, [`tsbm run ${last.id}`, ' ', last.finished ? badge(last.exitCode === 0 ? 'ok' : 'failed', `exit ${last.exitCode}`) : badge('unfinished', 'did not finish')]),
    el('p', { class: 'meta' }, [
      `${last.playbook} · started ${fmtTime(first.started)} · tsbm ${last.version}`,
      report.runs.length > 1 ? ` · resumed: ${report.runs.map((r) => r.id).join(' → ')}` : '',
      opts.length ? ` · ${opts.join(' · ')}` : '',
      last.badLines ? ` · ${last.badLines} unreadable journal line(s) ignored (the run was probably killed mid-write)` : '',
    ]),
  );
}

main();
