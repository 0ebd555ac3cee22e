// Stand-ins for the panels meshnode writes to, and for its alert receivers
// (tests/panels/README.md). One process per stand-in:
//
//   node stub.mjs --kind remnawave|marzban|receiver --listen HOST:PORT [--hosts FILE]
//                 [--token T] [--secret S] [--telegram-token T]
//
// Every request meshnode sends is checked against the panel's published
// contract, not against our reading of it:
//   remnawave: @remnawave/backend-contract's commands (GetHostsCommand,
//     BulkEnableHostsCommand, BulkDisableHostsCommand): their url and
//     method, and their zod RequestBodySchema; the stub's own answers are
//     checked by GetHostsCommand.ResponseSchema.
//   marzban: marzban-sdk ships no runtime schema (no models, no OpenAPI
//     document: only its request builders). The stub asks the SDK itself
//     which method, path and content type each call sends (getHosts,
//     modifyHosts, adminToken), with an axios adapter that records instead
//     of sending; the PUT body is checked against ProxyHost as Marzban's
//     API defines it (below), and must change nothing but is_disabled.
//   receiver: a webhook (X-Meshnode-Signature = hex HMAC-SHA256 of the raw
//     body with --secret) and the Telegram Bot API's sendMessage.
// A request that breaks the contract is answered 400 and recorded as a
// violation. GET /_stub/state tells the test everything; POST /_stub/mode
// {"mode": "ok"|"error"|"slow"|"down"|"garbage"} makes it fail (garbage:
// hosts off the panel's contract); POST /_stub/set
// {"id", "enabled"} changes a host by hand.
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function arg(name, fallback) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

const kind = arg('kind');
const [host, port] = arg('listen').split(/:(?=\d+$)/);
const token = arg('token', 'panel-token');
const secret = arg('secret', 'hook-secret');
const telegramToken = arg('telegram-token', '123456:telegram-token');
const startMs = Date.now();

const state = { mode: 'ok', hosts: [], writes: [], violations: [], requests: 0, received: [] };

function violation(what) {
  state.violations.push({ t: Date.now() - startMs, what });
  console.log('VIOLATION', what);
}

function uuidOf(i) {
  const hex = crypto.createHash('sha256').update('host-' + i).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

if (arg('hosts')) {
  const list = JSON.parse(fs.readFileSync(arg('hosts'), 'utf8'));
  state.hosts = list.map((h, i) => ({
    id: kind === 'marzban' ? `${h.tag ?? 'VLESS TCP REALITY'}#${i}` : uuidOf(i),
    tag: h.tag ?? 'VLESS TCP REALITY', remark: h.remark, address: h.address, port: h.port,
    enabled: h.enabled ?? true,
  }));
  // Marzban numbers hosts within their inbound.
  if (kind === 'marzban') {
    const counts = {};
    for (const h of state.hosts) { counts[h.tag] = counts[h.tag] ?? 0; h.id = `${h.tag}#${counts[h.tag]++}`; }
  }
}

// ---- Remnawave, from @remnawave/backend-contract --------------------------
let remnawave;
if (kind === 'remnawave') {
  const contract = require('@remnawave/backend-contract');
  remnawave = {
    get: contract.GetHostsCommand, enable: contract.BulkEnableHostsCommand, disable: contract.BulkDisableHostsCommand,
  };
}

function remnawaveHost(h, index) {
  return {
    uuid: h.id, viewPosition: index, remark: h.remark, address: h.address, port: h.port, path: null, sni: null,
    host: null, alpn: null, fingerprint: null, isDisabled: !h.enabled, securityLayer: 'DEFAULT',
    xhttpExtraParams: null, muxParams: null, sockoptParams: null, finalMask: null,
    inbound: { configProfileUuid: null, configProfileInboundUuid: null }, serverDescription: null, tags: [],
    isHidden: false, overrideSniFromAddress: false, keepSniBlank: false, vlessRouteId: null,
    pinnedPeerCertSha256: null, verifyPeerCertByName: null, shuffleHost: false, mihomoX25519: false,
    mihomoIpVersion: null, nodes: [], xrayJsonTemplateUuid: null, excludeFromSubscriptionTypes: [],
    mapper: {}, internalSquads: { mode: 'EXCLUDE', squads: [] },
  };
}

function handleRemnawave(req, body, reply) {
  if (req.headers.authorization !== 'Bearer ' + token) {
    violation(`${req.method} ${req.url}: Authorization is not the API token`);
    return reply(401, { message: 'Unauthorized' });
  }
  const commands = [
    ['GET', remnawave.get], ['POST', remnawave.enable], ['POST', remnawave.disable],
  ];
  const match = commands.find(([method, c]) => c.url === req.url && method === req.method.toUpperCase());
  if (!match) {
    violation(`${req.method} ${req.url}: no command of the contract`);
    return reply(404, { message: 'Not Found' });
  }
  const command = match[1];
  if (command === remnawave.get) {
    const answer = { response: state.hosts.map(remnawaveHost) };
    const checked = command.ResponseSchema.safeParse(answer);
    if (!checked.success) violation('the stub answers off the contract: ' + checked.error.message);
    return reply(200, answer);
  }
  let parsed;
  try { parsed = JSON.parse(body); } catch { parsed = undefined; }
  const checked = command.RequestBodySchema.safeParse(parsed);
  if (!checked.success || (req.headers['content-type'] ?? '').split(';')[0] !== 'application/json') {
    violation(`${req.method} ${req.url}: body or content type off the contract: ${checked.error?.message ?? req.headers['content-type']}`);
    return reply(400, { message: 'Bad Request' });
  }
  const enable = command === remnawave.enable;
  for (const uuid of checked.data.uuids) {
    const h = state.hosts.find((x) => x.id === uuid);
    if (!h) { violation(`${req.url}: unknown uuid ${uuid}`); continue; }
    h.enabled = enable;
  }
  record(req, enable ? checked.data.uuids : [], enable ? [] : checked.data.uuids);
  return reply(200, { response: { affectedRows: checked.data.uuids.length } });
}

// ---- Marzban, from marzban-sdk --------------------------------------------
let marzban;
async function learnMarzban() {
  const { MarzbanSDK } = await import('marzban-sdk');
  const calls = [];
  const sdk = new MarzbanSDK({ baseUrl: 'http://stub.invalid', username: 'u', password: 'p', token: 't',
                               authenticateOnInit: false, retries: 0 });
  sdk.client.defaults.adapter = async (config) => {
    calls.push({ method: config.method.toUpperCase(), url: config.url, type: config.headers['Content-Type'] });
    return { status: 200, statusText: 'OK', data: { access_token: 't' }, headers: {}, config };
  };
  await sdk.system.getHosts();
  await sdk.system.modifyHosts({});
  await sdk.admin.adminToken('u', 'p');
  const [get, put, login] = calls;
  marzban = { get, put, login, tokens: new Set() };
  const z = (await import('zod')).z;
  // ProxyHost as Marzban's API (app/models/proxy.py) defines it; the SDK
  // names the type but ships no runtime schema of it.
  const nullableString = z.string().nullable().optional();
  marzban.ProxyHost = z.object({
    remark: z.string(), address: z.string(), port: z.number().int().nullable().optional(),
    sni: nullableString, host: nullableString, path: nullableString,
    security: z.enum(['inbound_default', 'none', 'tls']).optional(),
    alpn: z.enum(['', 'h3', 'h2', 'http/1.1', 'h3,h2,http/1.1', 'h3,h2', 'h2,http/1.1']).optional(),
    fingerprint: z.enum(['', 'chrome', 'firefox', 'safari', 'ios', 'android', 'edge', '360', 'qq', 'random', 'randomized']).optional(),
    allowinsecure: z.boolean().nullable().optional(), is_disabled: z.boolean().nullable().optional(),
    mux_enable: z.boolean().nullable().optional(), fragment_setting: nullableString, noise_setting: nullableString,
    random_user_agent: z.boolean().nullable().optional(), use_sni_as_host: z.boolean().nullable().optional(),
  }).strict();
  marzban.Body = z.record(z.string(), z.array(marzban.ProxyHost));
}

function marzbanHost(h) {
  return { remark: h.remark, address: h.address, port: h.port, sni: null, host: null, path: null,
           security: 'inbound_default', alpn: '', fingerprint: '', allowinsecure: null, is_disabled: !h.enabled,
           mux_enable: false, fragment_setting: null, noise_setting: null, random_user_agent: false,
           use_sni_as_host: false };
}

function marzbanHosts() {
  const out = {};
  for (const h of state.hosts) (out[h.tag] ??= []).push(marzbanHost(h));
  return out;
}

// JSON with object keys sorted: the same value whatever order its keys come in.
function canonical(value) {
  if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']';
  if (value && typeof value === 'object') {
    return '{' + Object.keys(value).sort().map((k) => JSON.stringify(k) + ':' + canonical(value[k])).join(',') + '}';
  }
  return JSON.stringify(value);
}

function matches(req, call) {
  return req.method.toUpperCase() === call.method && req.url === call.url &&
         (call.type === undefined || (req.headers['content-type'] ?? '').split(';')[0] === call.type);
}

function handleMarzban(req, body, reply) {
  if (matches(req, marzban.login)) {
    const form = new URLSearchParams(body);
    if (form.get('grant_type') !== 'password' || form.get('username') !== 'admin' || form.get('password') !== 'secret') {
      return reply(401, { detail: 'Incorrect username or password' });
    }
    const issued = 'tok-' + crypto.randomBytes(8).toString('hex');
    marzban.tokens.add(issued);
    return reply(200, { access_token: issued, token_type: 'bearer' });
  }
  const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
  if (!marzban.tokens.has(bearer) && bearer !== token) return reply(401, { detail: 'Could not validate credentials' });
  if (matches(req, marzban.get)) return reply(200, marzbanHosts());
  if (!matches(req, marzban.put)) {
    violation(`${req.method} ${req.url}: no request marzban-sdk makes`);
    return reply(404, { detail: 'Not Found' });
  }
  let parsed;
  try { parsed = JSON.parse(body); } catch { parsed = undefined; }
  const checked = marzban.Body.safeParse(parsed);
  if (!checked.success) {
    violation('PUT /api/hosts: not {inbound_tag: ProxyHost[]}: ' + checked.error.message);
    return reply(422, { detail: 'Unprocessable Entity' });
  }
  const current = marzbanHosts();
  const enable = [], disable = [];
  for (const [tag, list] of Object.entries(parsed)) {
    const held = current[tag];
    if (!held || held.length !== list.length) { violation(`PUT /api/hosts: inbound '${tag}' added or resized`); continue; }
    list.forEach((sent, i) => {
      const { is_disabled: a, ...restSent } = sent;
      const { is_disabled: b, ...restHeld } = held[i];
      if (canonical(restSent) !== canonical(restHeld)) violation(`PUT /api/hosts: ${tag}#${i} changed more than is_disabled`);
      const h = state.hosts.filter((x) => x.tag === tag)[i];
      if (!!a !== !h.enabled) (a ? disable : enable).push(h.id);
      h.enabled = !a;
    });
  }
  record(req, enable, disable);
  return reply(200, marzbanHosts());
}

// ---- The alert receiver ----------------------------------------------------
function handleReceiver(req, body, reply) {
  if (req.method === 'POST' && req.url === '/hook') {
    const expected = crypto.createHmac('sha256', secret).update(body).digest('hex');
    const given = req.headers['x-meshnode-signature'] ?? '';
    if (given.length !== expected.length || !crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected))) {
      violation('webhook: bad signature');
      return reply(401, { error: 'bad signature' });
    }
    state.received.push({ t: Date.now() - startMs, channel: 'webhook', node: req.headers['x-meshnode-node'],
                          alert: JSON.parse(body) });
    return reply(200, { ok: true });
  }
  const telegram = req.url.match(/^\/bot([^/]+)\/sendMessage$/);
  if (req.method === 'POST' && telegram) {
    if (telegram[1] !== telegramToken) return reply(401, { ok: false, error_code: 401, description: 'Unauthorized' });
    let parsed;
    try { parsed = JSON.parse(body); } catch { parsed = undefined; }
    const okChat = parsed && (typeof parsed.chat_id === 'string' || Number.isInteger(parsed.chat_id));
    const okText = parsed && typeof parsed.text === 'string' && parsed.text.length >= 1 && parsed.text.length <= 4096;
    if (!okChat || !okText) {
      violation('sendMessage: chat_id or text off the Bot API');
      return reply(400, { ok: false, error_code: 400, description: 'Bad Request' });
    }
    state.received.push({ t: Date.now() - startMs, channel: 'telegram', text: parsed.text });
    return reply(200, { ok: true, result: { message_id: state.received.length, date: 0, text: parsed.text } });
  }
  return reply(404, { error: 'not found' });
}

function record(req, enable, disable) {
  state.writes.push({ t: Date.now() - startMs, node: req.headers['x-meshnode-node'] ?? '', enable, disable });
}

function stubControl(req, body, reply) {
  if (req.url === '/_stub/state') return reply(200, { ...state, now: Date.now() - startMs });
  const parsed = JSON.parse(body || '{}');
  if (req.url === '/_stub/mode') { state.mode = parsed.mode; return reply(200, { mode: state.mode }); }
  if (req.url === '/_stub/set') {
    const h = state.hosts.find((x) => x.id === parsed.id);
    if (!h) return reply(404, {});
    h.enabled = parsed.enabled;
    return reply(200, h);
  }
  return reply(404, {});
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const reply = (status, json) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(json));
    };
    if (req.url.startsWith('/_stub/')) return stubControl(req, body, reply);
    state.requests++;
    if (state.mode === 'down') return req.socket.destroy();
    if (state.mode === 'error') return reply(503, { message: 'Service Unavailable' });
    if (state.mode === 'slow') return setTimeout(() => reply(503, { message: 'late' }), 60_000);
    // A panel answering off its own contract: hosts without their fields.
    if (state.mode === 'garbage' && req.method === 'GET') {
      return reply(200, kind === 'marzban' ? { 'VLESS TCP REALITY': [{ remark: 7, port: 'x' }] }
                                           : { response: [{ uuid: 'not-a-uuid', port: '443' }] });
    }
    if (kind === 'remnawave') return handleRemnawave(req, body, reply);
    if (kind === 'marzban') return handleMarzban(req, body, reply);
    return handleReceiver(req, body, reply);
  });
});

if (kind === 'marzban') await learnMarzban();
server.listen(Number(port), host, () => console.log(`stub ${kind} on ${host}:${port}`));
process.on('SIGTERM', () => process.exit(0));
