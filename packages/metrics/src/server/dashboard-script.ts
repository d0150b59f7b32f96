/**
 * The dashboard's browser script, as text (inlined in the page, allowed by its hash in the
 * Content-Security-Policy). Plain ES2017, no build step, no dependencies. It reads `snapshot`
 * events of `/debug/events` and rebuilds the tables with `textContent` only: nothing a key, a
 * cause or an error says is ever parsed as HTML.
 */
export const DASHBOARD_SCRIPT = String.raw`(function () {
  'use strict';
  var view = { offset: 0, limit: 50, state: '' };
  var source = null;
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function cell(row, text, cls) { var td = el('td', cls, text); row.appendChild(td); return td; }
  function dur(n) {
    if (n === undefined || n === null) return '';
    if (n < 1000) return Math.round(n) + ' ms';
    if (n < 120000) return (n / 1000).toFixed(1) + ' s';
    return Math.round(n / 60000) + ' min';
  }
  function num(n) { return n === undefined || n === null ? '\u2013' : String(Math.round(n * 100) / 100); }
  function status(text, cls) { var s = $('status'); s.textContent = text; s.className = 'status ' + cls; }
  function connect() {
    if (source) source.close();
    var q = new URLSearchParams();
    q.set('limit', String(view.limit));
    q.set('offset', String(view.offset));
    if (view.state) q.set('state', view.state);
    source = new EventSource('/debug/events?' + q.toString());
    source.addEventListener('snapshot', function (e) {
      status('live', 'ok');
      render(JSON.parse(e.data));
    });
    source.onerror = function () { status('disconnected, retrying\u2026', 'bad'); };
    $('page').textContent = 'keys ' + (view.offset + 1) + '\u2013' + (view.offset + view.limit);
  }
  function render(s) {
    $('now').textContent = s.now;
    var lead = $('leadership');
    lead.replaceChildren();
    if (s.leadership.length === 0) lead.appendChild(el('span', 'muted', 'no leader election reported'));
    s.leadership.forEach(function (l) {
      lead.appendChild(el('span', l.leading ? 'pill ok' : 'pill', l.name + ': ' + (l.leading ? 'leading' : 'standby')));
    });
    var shard = $('sharding');
    shard.replaceChildren();
    if (!s.sharding) shard.textContent = 'Shards: no sharding.';
    else {
      var sh = s.sharding;
      shard.appendChild(el('span', '', 'Shard group ' + sh.group + ': '));
      shard.appendChild(el('span', sh.phase === 'member' ? 'pill ok' : 'pill', sh.identity + ' ' + sh.phase + ', epoch ' + sh.epoch));
      shard.appendChild(el('span', '', sh.members.length + (sh.members.length === 1 ? ' member: ' : ' members: ') + (sh.members.join(', ') || 'none')));
    }
    var summary = $('summary');
    summary.replaceChildren();
    var hot = 0;
    var more = false;
    s.controllers.forEach(function (c) {
      var hotKeys = typeof c.hotLoopKeys === 'number' ? c.hotLoopKeys
        : c.keys.filter(function (k) { return k.hotLoop; }).length;
      hot += hotKeys;
      if (c.truncated) more = true;
      var r = el('tr', hotKeys > 0 ? 'hot' : '');
      cell(r, c.name, 'name');
      cell(r, (c.queue.running === undefined ? '\u2013' : c.queue.running) + ' / ' + c.maxConcurrentReconciles, 'n');
      cell(r, c.queue.depth, 'n');
      cell(r, c.queue.waiting === undefined ? '\u2013' : c.queue.waiting, 'n');
      cell(r, num(c.reconciles.perSecond), 'n');
      cell(r, num(c.reconciles.errorsPerSecond), c.reconciles.errorsPerSecond > 0 ? 'n bad' : 'n');
      cell(r, c.reconciles.meanMs === undefined ? '' : dur(c.reconciles.meanMs), 'n');
      cell(r, c.reconciles.p95Ms === undefined ? '' : '\u2264 ' + dur(c.reconciles.p95Ms), 'n');
      cell(r, c.reconciles.total, 'n');
      cell(r, c.reconciles.errors, c.reconciles.errors > 0 ? 'n bad' : 'n');
      cell(r, hotKeys, hotKeys > 0 ? 'n hotcell' : 'n');
      summary.appendChild(r);
    });
    var banner = $('hotbanner');
    banner.hidden = hot === 0;
    banner.textContent = hot === 0 ? '' : 'Hot loop: ' + hot + (hot === 1
      ? ' key keeps reconciling because of its own writes'
      : ' keys keep reconciling because of their own writes') + ' (highlighted below)';
    $('next').disabled = !more;
    $('prev').disabled = view.offset === 0;
    var box = $('controllers');
    box.replaceChildren();
    s.controllers.forEach(function (c) { box.appendChild(controller(c)); });
  }
  function controller(c) {
    var section = el('section', 'controller');
    section.appendChild(el('h2', '', c.name));
    var depth = c.queue.depthByPriority.map(function (p) { return 'priority ' + p.priority + ': ' + p.size; }).join(', ');
    section.appendChild(el('p', 'muted', 'queued ' + c.queue.depth + (depth ? ' (' + depth + ')' : '') +
      ', longest running ' + dur(c.queue.longestRunningMs)));
    if (c.kinds && c.kinds.length > 0) {
      var kinds = el('p', 'muted');
      kinds.textContent = 'by kind: ' + c.kinds.map(function (k) { return k.kind + ' ' + num(k.perSecond) + '/s (' + k.total + ')'; }).join(', ');
      section.appendChild(kinds);
    }
    if (c.keys.length === 0) {
      section.appendChild(el('p', 'muted', 'no keys waiting, running or backing off'));
      return section;
    }
    var table = el('table', 'keys');
    var head = el('tr');
    ['key', 'state', 'attempts', 'causes', 'last error', 'next retry / running for'].forEach(function (h) { head.appendChild(el('th', '', h)); });
    var thead = el('thead');
    thead.appendChild(head);
    table.appendChild(thead);
    var body = el('tbody');
    c.keys.forEach(function (k) { body.appendChild(keyRow(k)); });
    table.appendChild(body);
    section.appendChild(table);
    if (c.truncated) section.appendChild(el('p', 'muted', 'more keys: use next'));
    return section;
  }
  function keyRow(k) {
    var r = el('tr', 'key ' + k.state + (k.hotLoop ? ' hot' : ''));
    r.setAttribute('data-key', k.key);
    cell(r, k.key, 'name');
    var st = cell(r, k.state);
    if (k.owned === false) st.appendChild(el('div', 'small', 'not owned: another member runs it'));
    if (k.hotLoop) {
      st.appendChild(el('span', 'badge', 'HOT LOOP'));
      st.appendChild(el('div', 'small', k.hotLoop.selfCausedRuns + ' self-caused runs since ' + k.hotLoop.since));
    }
    cell(r, k.attempts, 'n');
    var causes = cell(r, '');
    (k.runCauses || []).concat(k.causes).forEach(function (c) { causes.appendChild(el('div', '', c)); });
    if (k.droppedCauses > 0) causes.appendChild(el('div', 'muted', '+' + k.droppedCauses + ' more'));
    var chain = k.hotLoop ? k.hotLoop.chain : k.chain;
    if (chain && chain.length > 0) {
      var ol = el('ol', 'chain');
      chain.forEach(function (link) { ol.appendChild(el('li', '', link)); });
      causes.appendChild(ol);
    }
    var err = cell(r, '', k.lastError ? 'error' : '');
    if (k.lastError) {
      err.appendChild(el('div', '', k.lastError.message));
      err.appendChild(el('div', 'small', k.lastError.name + (k.lastError.code ? ' ' + k.lastError.code : '') + (k.lastError.at ? ' at ' + k.lastError.at : '')));
    }
    cell(r, k.nextRetryInMs !== undefined ? 'in ' + dur(k.nextRetryInMs) + ' (' + k.nextRetryAt + ')'
      : k.runningForMs !== undefined ? dur(k.runningForMs) + (k.runsAgain ? ', runs again' : '') : '');
    return r;
  }
  $('state').addEventListener('change', function (e) { view.state = e.target.value; view.offset = 0; connect(); });
  $('limit').addEventListener('change', function (e) { view.limit = Number(e.target.value); view.offset = 0; connect(); });
  $('prev').addEventListener('click', function () { view.offset = Math.max(0, view.offset - view.limit); connect(); });
  $('next').addEventListener('click', function () { view.offset += view.limit; connect(); });
  connect();
})();
`;
