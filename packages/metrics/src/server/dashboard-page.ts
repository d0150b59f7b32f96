import { createHash } from 'node:crypto';
import { DASHBOARD_SCRIPT } from './dashboard-script.ts';

const STYLE = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1d232a;--muted:#6a737d;--line:#d0d7de;--ok:#1a7f37;--bad:#cf222e;--hot:#fff1e5;--hotline:#e16f24;--run:#eefbf1;--back:#fff8c5}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8b949e;--line:#30363d;--hot:#3d1f0b;--run:#0f2a19;--back:#2e2a0b}}
body{margin:0;font:14px/1.4 system-ui,sans-serif;background:var(--bg);color:var(--fg)}
header{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;padding:.75rem 1.25rem;border-bottom:1px solid var(--line)}
header h1{font-size:1.1rem;margin:0}main{padding:0 1.25rem 2rem}
.status{font-weight:600}.status.ok{color:var(--ok)}.status.bad{color:var(--bad)}
.muted{color:var(--muted)}.small{font-size:.85em;color:var(--muted)}
.pill{border:1px solid var(--line);border-radius:1rem;padding:.05rem .6rem;margin-right:.3rem}.pill.ok{border-color:var(--ok);color:var(--ok)}
#hotbanner{margin:1rem 0;padding:.6rem .9rem;border-left:4px solid var(--hotline);background:var(--hot);font-weight:600}
table{border-collapse:collapse;margin:.5rem 0 1rem;width:100%}th,td{border-bottom:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top}
th{font-weight:600;color:var(--muted)}td.n{text-align:right;font-variant-numeric:tabular-nums}td.name{font-family:ui-monospace,monospace;word-break:break-all;min-width:14ch}
td.bad,td.error{color:var(--bad)}tr.running{background:var(--run)}tr.backoff{background:var(--back)}
tr.hot{background:var(--hot);box-shadow:inset 4px 0 0 var(--hotline)}td.hotcell{color:var(--hotline);font-weight:700}
.badge{display:inline-block;margin-left:.4rem;padding:0 .4rem;border-radius:.3rem;background:var(--hotline);color:#fff;font-size:.8em;font-weight:700}
ol.chain{margin:.2rem 0 0 1.1rem;padding:0;font-size:.9em}
.controls{display:flex;gap:.5rem;align-items:center;margin:1rem 0}h2{font-size:1rem;margin:1.2rem 0 .2rem}
`;

const BODY = `<header><h1>Converge</h1><span id="status" class="status">connecting\u2026</span>
<span>as of <span id="now" class="muted">\u2013</span></span><span id="leadership"></span></header>
<main>
<div id="hotbanner" hidden></div>
<h2>Controllers</h2>
<table><thead><tr><th>controller</th><th>running / max</th><th>queued</th><th>waiting</th><th>reconciles/s</th><th>errors/s</th><th>mean</th><th>p95</th><th>reconciles</th><th>errors</th><th>hot loops</th></tr></thead>
<tbody id="summary"></tbody></table>
<p id="sharding" class="muted">Shards: no sharding.</p>
<div class="controls"><label>state <select id="state"><option value="">all</option><option>running</option><option>backoff</option><option>waiting</option><option>queued</option><option value="hotloop">hot loop</option></select></label>
<label>per page <select id="limit"><option>20</option><option selected>50</option><option>100</option><option>500</option></select></label>
<button id="prev" type="button">previous</button><button id="next" type="button">next</button><span id="page" class="muted"></span></div>
<div id="controllers"></div>
</main>`;

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** The page at `/`: markup, the inline style and the inline script, the same for every request. */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Converge dashboard</title><link rel="icon" href="data:,">
<style>${STYLE}</style></head><body>
${BODY}
<script>${DASHBOARD_SCRIPT}</script>
</body></html>
`;

/**
 * Its Content-Security-Policy: nothing but the one inline style and script (by hash, so no
 * `unsafe-inline`, no `eval`), and connections to the page's own origin (the event stream).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  `script-src ${sha256(DASHBOARD_SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
