// A model of clooks' request path, for bench/peers.py (not clooks itself).
//
// clooks (mauribadnights/clooks, npm name @mauribadnights/clooks 0.5.x) is not
// installable here: it is not on the npm registry and no snapshot of its
// repository could be fetched.  Its source was read file by file through the
// project's search tool (src/server.ts at 26a7671, src/handlers.ts at 0859730,
// src/metrics.ts at 3beb9f5) and this file does, step by step, what one hook
// request does there — written anew, with no line of clooks in it:
//
//   * node's http server on 127.0.0.1; GET /health answers without auth;
//   * a POST with a configured token checks `Authorization: Bearer` in
//     constant time; the path must be /hooks/<Event> with a known event;
//   * an event with no handler is answered `{}` at once, before the body is
//     read (clooks' fast path);
//   * otherwise: the body is read and JSON.parse'd, a log line is appended to
//     the log file (appendFileSync), the handlers run in parallel —
//     `script`: spawn('sh', ['-c', command]) with the login shell's
//     environment (read once with `$SHELL -ilc env`), input JSON on stdin,
//     stdout JSON-parsed; `inline`: the module is import()ed (cached by node)
//     and its default export awaited, raced against a timeout — each result
//     is appended to the metrics file (appendFileSync), the results merged
//     (last writer wins for hookSpecificOutput/decision/reason), one more log
//     line, and the answer sent with Content-Length.
//
// Usage: node clooks_model.mjs <manifest.json> <port> <state dir>
// manifest: {"token": "...", "handlers": {"PreToolUse": [{"id", "type":
// "script"|"inline", "command"|"module", "timeout"}]}}
import { createServer } from 'node:http';
import { spawn, execSync } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { timingSafeEqual } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [manifestPath, portText, stateDir] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
const token = manifest.token ?? '';
const logFile = join(stateDir, 'clooks.log');
const metricsFile = join(stateDir, 'metrics.jsonl');
const EVENTS = new Set(['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'SessionStart', 'SessionEnd',
  'Stop', 'SubagentStop', 'Notification', 'PreCompact', 'PermissionRequest']);

let shellEnv = null;
function loginEnv() {
  if (shellEnv) return shellEnv;
  try {
    const text = execSync(`${process.env.SHELL || '/bin/sh'} -ilc env`, { encoding: 'utf8', timeout: 5000 });
    const env = {};
    for (const line of text.split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
    }
    shellEnv = { ...env, ...process.env, ...(env.PATH ? { PATH: env.PATH } : {}) };
  } catch {
    shellEnv = process.env;
  }
  return shellEnv;
}

function log(text) {
  try { appendFileSync(logFile, `[${new Date().toISOString()}] ${text}\n`); } catch {}
}

function reply(res, status, data) {
  const body = JSON.stringify(data);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function authorized(header) {
  if (!header || !header.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice(7));
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function runScript(handler, input) {
  return new Promise((resolve) => {
    const start = performance.now();
    const child = spawn('sh', ['-c', handler.command], { stdio: ['pipe', 'pipe', 'pipe'], env: loginEnv() });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d.toString(); });
    child.stderr.on('data', (d) => { err += d.toString(); });
    child.stdin.write(JSON.stringify(input));
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGTERM'), handler.timeout ?? 5000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const ms = performance.now() - start;
      if (code !== 0) return resolve({ id: handler.id, ok: false, error: `exit ${code}: ${err.trim()}`, ms });
      let output;
      if (out.trim()) {
        try { output = JSON.parse(out.trim()); } catch { output = { additionalContext: out.trim() }; }
      }
      resolve({ id: handler.id, ok: true, output, ms });
    });
    child.on('error', (e) => { clearTimeout(timer); resolve({ id: handler.id, ok: false, error: e.message, ms: 0 }); });
  });
}

async function runInline(handler, input) {
  const start = performance.now();
  try {
    const mod = await import(pathToFileURL(handler.module).href);
    const output = await Promise.race([
      mod.default(input),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), handler.timeout ?? 5000)),
    ]);
    return { id: handler.id, ok: true, output, ms: performance.now() - start };
  } catch (e) {
    return { id: handler.id, ok: false, error: String(e), ms: performance.now() - start };
  }
}

function merge(results) {
  const merged = {};
  const contexts = [];
  for (const r of results) {
    if (!r.ok || !r.output || typeof r.output !== 'object') continue;
    if (typeof r.output.additionalContext === 'string' && r.output.additionalContext) contexts.push(r.output.additionalContext);
    for (const key of ['hookSpecificOutput', 'decision', 'reason']) {
      if (r.output[key] !== undefined) merged[key] = r.output[key];
    }
  }
  if (contexts.length) merged.additionalContext = contexts.join('\n');
  return merged;
}

const server = createServer(async (req, res) => {
  const url = req.url ?? '/';
  if (req.method === 'GET' && url === '/health') return reply(res, 200, { status: 'ok' });
  if (req.method === 'POST' && token && !authorized(req.headers.authorization)) return reply(res, 401, { error: 'Unauthorized' });
  const match = url.match(/^\/hooks\/([A-Za-z]+)$/);
  if (req.method !== 'POST' || !match) return reply(res, 404, { error: 'Not found' });
  const event = match[1];
  if (!EVENTS.has(event)) return reply(res, 400, { error: `Unknown hook event: ${event}` });
  const handlers = manifest.handlers?.[event] ?? [];
  if (handlers.length === 0) return reply(res, 200, {});
  let input;
  try {
    let body = '';
    for await (const chunk of req) body += chunk.toString();
    input = JSON.parse(body);
  } catch {
    return reply(res, 400, { error: 'Invalid JSON body' });
  }
  log(`Hook: ${event} (${handlers.length} handlers)`);
  const results = await Promise.all(handlers.map((h) => (h.type === 'inline' ? runInline(h, input) : runScript(h, input))));
  for (const r of results) {
    try {
      appendFileSync(metricsFile, JSON.stringify({ ts: new Date().toISOString(), event, handler: r.id,
        duration_ms: r.ms, ok: r.ok, error: r.error, session_id: input.session_id }) + '\n');
    } catch {}
  }
  const merged = merge(results);
  log(`  -> ${results.filter((r) => r.ok).length}/${results.length} ok`);
  reply(res, 200, merged);
});

server.listen(Number(portText), '127.0.0.1', () => { process.stdout.write('listening\n'); });
process.on('SIGTERM', () => server.close(() => process.exit(0)));
