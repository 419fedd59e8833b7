// @ts-check
// The per-node timeline: one row per host, one bar per task coloured by outcome. Drawn on a
// canvas, and only the rows in view, so 1000+ nodes scroll as smoothly as 3; host names are
// a handful of elements for the rows in view (when rows are tall enough to read).

const LABEL_MIN_ROW = 14;
const GUTTER = 6;
const PAD_RIGHT = 8;

/**
 * @param {RunReport} report
 * @param {{ onSelect: (host: Host, entry: Entry | undefined) => void }} opts
 */
function createTimeline(report, opts) {
  const scroller = byId('tl-rows');
  const viewport = byId('tl-viewport');
  const spacer = byId('tl-spacer');
  const labels = byId('tl-labels');
  const canvas = /** @type {HTMLCanvasElement} */ (byId('tl-bars'));
  const axis = /** @type {HTMLCanvasElement} */ (byId('tl-axis'));
  const tip = byId('tl-tip');
  const axisRow = byId('tl-axis-row');
  /** @type {Host[]} */
  let rows = [];
  let rowH = 20;
  let width = 0;
  let height = 0;

  /** @param {number} ms */
  const xOf = (ms) => GUTTER + (ms / report.axisMs) * Math.max(1, width - GUTTER - PAD_RIGHT);

  /**
   * @param {HTMLCanvasElement} c
   * @param {number} w
   * @param {number} h
   */
  function sizeCanvas(c, w, h) {
    const dpr = window.devicePixelRatio || 1;
    c.style.width = `${w}px`;
    c.style.height = `${h}px`;
    c.width = Math.max(1, Math.round(w * dpr));
    c.height = Math.max(1, Math.round(h * dpr));
    const ctx = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return ctx;
  }

  /** A readable tick step for the axis length and width. */
  function tickStep() {
    const steps = [1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 216e5];
    const wanted = report.axisMs / Math.max(2, width / 90);
    return steps.find((s) => s >= wanted) || steps[steps.length - 1];
  }

  function drawAxis() {
    const ctx = sizeCanvas(axis, width, 22);
    ctx.clearRect(0, 0, width, 22);
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#555';
    ctx.strokeStyle = '#ccc';
    for (const run of report.runs) {
      const step = tickStep();
      for (let t = 0; t <= run.durationMs; t += step) {
        const x = Math.round(xOf(run.offsetMs + t)) + 0.5;
        ctx.beginPath();
        ctx.moveTo(x, 14);
        ctx.lineTo(x, 22);
        ctx.stroke();
        const label = report.runs.length > 1 && t === 0 ? `run ${report.runs.indexOf(run) + 1}` : fmtDuration(t);
        ctx.fillText(label, x + 2, 11);
      }
    }
  }

  function drawBars() {
    const ctx = sizeCanvas(canvas, width, height);
    ctx.clearRect(0, 0, width, height);
    const top = scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / rowH));
    const last = Math.min(rows.length, Math.ceil((top + height) / rowH));
    const barH = rowH >= LABEL_MIN_ROW ? rowH - 6 : Math.max(1, rowH - 1);
    const inset = rowH >= LABEL_MIN_ROW ? 3 : 0;
    // the gaps between the runs of a resume chain
    for (let i = 1; i < report.runs.length; i++) {
      const prev = report.runs[i - 1];
      const x0 = xOf(prev.offsetMs + prev.durationMs);
      const x1 = xOf(report.runs[i].offsetMs);
      ctx.fillStyle = '#f1f3f5';
      ctx.fillRect(x0, 0, Math.max(4, x1 - x0), height);
    }
    for (let i = first; i < last; i++) {
      const h = rows[i];
      const y = i * rowH - top;
      if (rowH >= LABEL_MIN_ROW && i % 2 === 1) {
        ctx.fillStyle = '#f8f9fa';
        ctx.fillRect(0, y, width, rowH);
      }
      ctx.fillStyle = /** @type {Record<string, string>} */ (STATE_COLORS)[h.state] || '#999';
      if (h.state !== 'ok') ctx.fillRect(0, y, GUTTER - 2, Math.max(1, rowH - (inset ? 1 : 0)));
      for (const e of h.entries) {
        const x = xOf(e.start);
        const w = Math.max(1, xOf(e.start + e.dur) - x);
        ctx.fillStyle = /** @type {Record<string, string>} */ (COLORS)[e.status] || '#999';
        // a pixel of air between neighbouring bars that are wide enough to spare it
        ctx.fillRect(x, y + inset, w > 3 ? w - 1 : w, barH);
        if (e.retries && barH >= 3) {
          // retries: a dark band along the top of the bar
          ctx.fillStyle = '#212529';
          ctx.fillRect(x, y + inset, Math.max(2, w > 3 ? w - 1 : w), Math.max(1, Math.round(barH / 4)));
        }
      }
    }
    canvas.dataset.drawnRows = String(Math.max(0, last - first));
    canvas.dataset.rows = String(rows.length);
  }

  function drawLabels() {
    labels.replaceChildren();
    const show = rowH >= LABEL_MIN_ROW;
    viewport.classList.toggle('compact', !show);
    axisRow.classList.toggle('compact', !show);
    if (!show) return;
    const top = scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / rowH));
    const last = Math.min(rows.length, Math.ceil((top + height) / rowH));
    for (let i = first; i < last; i++) {
      const h = rows[i];
      const mark = h.state === 'ok' ? '' : h.state === 'unfinished' ? '◌ ' : '✖ ';
      const row = el('div', { class: `tl-label st-${h.state}`, 'data-host': h.name, title: `${h.name}: ${h.state}`, tabindex: 0, role: 'button' }, [
        el('span', { class: 'mark', text: mark }),
        h.name,
      ]);
      row.style.top = `${i * rowH - top}px`;
      row.style.height = `${rowH}px`;
      row.style.lineHeight = `${rowH}px`;
      row.addEventListener('click', () => opts.onSelect(h, undefined));
      row.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') opts.onSelect(h, undefined);
      });
      labels.append(row);
    }
  }

  function draw() {
    width = canvas.parentElement ? canvas.parentElement.clientWidth - (rowH >= LABEL_MIN_ROW ? labels.offsetWidth : 0) : 800;
    width = Math.max(200, width);
    drawAxis();
    drawBars();
    drawLabels();
  }

  /** @param {Host[]} list @param {number} rowHeight */
  function setRows(list, rowHeight) {
    rows = list;
    rowH = rowHeight;
    const total = rows.length * rowH;
    height = Math.max(rowH, Math.min(total, Math.round(window.innerHeight * 0.7)));
    viewport.style.height = `${height}px`;
    spacer.style.height = `${Math.max(0, total - height)}px`;
    if (scroller.scrollTop > total) scroller.scrollTop = 0;
    draw();
  }

  /** @param {MouseEvent} ev */
  function hit(ev) {
    const r = canvas.getBoundingClientRect();
    const x = ev.clientX - r.left;
    const i = Math.floor((ev.clientY - r.top + scroller.scrollTop) / rowH);
    const h = rows[i];
    if (!h) return undefined;
    let best;
    for (const e of h.entries) {
      const x0 = xOf(e.start);
      const x1 = Math.max(x0 + 1, xOf(e.start + e.dur));
      if (x >= x0 - 1 && x <= x1 + 1) best = e;
    }
    return { host: h, entry: best };
  }

  let scheduled = false;
  scroller.addEventListener('scroll', () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      drawBars();
      drawLabels();
    });
  });
  canvas.addEventListener('mousemove', (ev) => {
    const h = hit(ev);
    if (!h) {
      tip.hidden = true;
      return;
    }
    const e = h.entry;
    const lines = [`${h.host.name} (${h.host.state})`];
    if (e) {
      lines.push(`${report.tasks[e.task].name}: ${e.status}, ${fmtDuration(e.dur)}`);
      if (e.retries) lines.push(`${e.retries} retr${e.retries === 1 ? 'y' : 'ies'}`);
      if (e.msg) lines.push(e.msg.length > 240 ? `${e.msg.slice(0, 240)}…` : e.msg);
    }
    tip.textContent = lines.join('\n');
    tip.hidden = false;
    tip.style.left = `${Math.min(ev.clientX + 14, window.innerWidth - 380)}px`;
    tip.style.top = `${ev.clientY + 14}px`;
  });
  canvas.addEventListener('mouseleave', () => {
    tip.hidden = true;
  });
  canvas.addEventListener('click', (ev) => {
    const h = hit(ev);
    if (h) opts.onSelect(h.host, h.entry);
  });
  window.addEventListener('resize', () => draw());

  return { setRows, draw };
}
