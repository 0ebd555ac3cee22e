// The status page (node/api/status_page.html) in Debian's Chromium, driven by
// playwright-core; run by browser_test.cc against a fleet of real daemons:
//
//   node page_test.mjs '{"url": "http://127.0.61.4:PORT/", "token": "...", ...}'
//
// The JSON: phase, url, token, chromium (the executable), servers (every id),
// timeout_ms (the whole run), and per phase:
//   "block": wrong_token, unreachable (an id the fleet shows unreachable),
//     failing_observers and reaching_observers (of that server), caption (its
//     expected caption), summary (the expected one-line summary), screenshot
//     and phone_screenshot (PNG paths), block_file (the unreachable server's
//     block file, emptied to end the block). Signs in through the form.
//   "down": down (an id whose daemon and listener are stopped: no reports,
//     no witness reaches it), summary, screenshot. Opens the page as
//     /#token=TOKEN, as a wall screen does.
// What the page shows is compared with what the API answers at that moment.
// Exit codes: 0 every check passed; 1 a check failed (each printed as FAIL);
// 77 playwright-core cannot be loaded. Every wait is bounded.

import { renameSync, writeFileSync } from "node:fs";

let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch (error) {
  console.log("SKIP: playwright-core cannot be loaded: " + error.message);
  process.exit(77);
}

const want = JSON.parse(process.argv[2]);
const STATUS_WORDS = { ok: "ok", unavailable: "unavailable", unreachable: "unreachable", no_data: "no data" };
// The page's caption: the API's, except "Down" for a server that sends no
// report and that every witness fails (docs/API.md, GET /).
const isDown = s => s.status === "unreachable" && s.flags.includes("no_data") &&
  s.witnesses.eligible > 0 && s.witnesses.failing === s.witnesses.eligible;
const pageCaption = s => isDown(s) ? "Down" : s.caption;
const NO_DATA_BADGE = "No data \u2014 agent not responding";
// What Chromium needs on a closed network: no GPU, no QUIC, none of its own
// background connections. playwright-core adds --headless, --no-sandbox and
// a fresh temporary --user-data-dir itself.
const CHROMIUM_FLAGS = ["--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync"];
const failures = [];
const check = (ok, message) => { if (!ok) failures.push(message); };
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

async function apiGet(path) {
  const response = await fetch(new URL(path, want.url), { headers: { Authorization: "Bearer " + want.token } });
  if (!response.ok) throw new Error("GET " + path + ": HTTP " + response.status);
  return response.json();
}

// Runs `probe` (which returns a list of problems) until it finds none or
// `limitMs` passes; the last problems.
async function eventually(probe, limitMs) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const problems = await probe();
    if (problems.length === 0 || Date.now() >= deadline) return problems;
    await sleep(500);
  }
}

// What the page shows, read from its DOM.
function pageView(page) {
  return page.evaluate(() => {
    const view = { servers: {}, routes: {}, cells: {} };
    for (const card of document.querySelectorAll("#servers [data-server]")) {
      const dot = card.querySelector(".dot");
      const facts = {};
      for (const dt of card.querySelectorAll("dt")) facts[dt.textContent] = dt.nextElementSibling.textContent;
      const report = card.querySelector(".report-data");
      view.servers[card.dataset.server] = {
        dot: dot ? dot.className : "", label: dot ? dot.getAttribute("aria-label") : "",
        role: dot ? dot.getAttribute("role") : "",
        caption: card.querySelector(".caption") ? card.querySelector(".caption").textContent : "",
        badges: [...card.querySelectorAll(".badge")].map(b => b.textContent),
        classes: card.className.split(" "), facts,
        reportGreyed: !!report && report.classList.contains("stale-data") &&
          getComputedStyle(report.querySelector("dd")).color === "rgb(140, 149, 159)",
        staleNote: card.querySelector(".stale-note") ? card.querySelector(".stale-note").textContent : "",
        downWhy: card.querySelector(".down-why") ? card.querySelector(".down-why").textContent : "" };
    }
    view.summary = document.getElementById("summary").textContent;
    for (const card of document.querySelectorAll("#routes [data-route]")) {
      view.routes[card.dataset.route] = {
        degraded: card.classList.contains("degraded"),
        reason: card.querySelector(".reason") ? card.querySelector(".reason").textContent : "",
        rotation: [...card.querySelectorAll("li[data-in-rotation=true]")].map(li => li.dataset.server) };
    }
    for (const td of document.querySelectorAll("#matrix td[data-observer]")) {
      view.cells[td.dataset.observer + " -> " + td.dataset.target] = {
        classes: td.className.split(" "), title: td.getAttribute("title") || "" };
    }
    return view;
  });
}

function compareServers(view, servers) {
  const problems = [];
  const shown = Object.keys(view.servers).sort().join(", ");
  if (shown !== [...want.servers].sort().join(", ")) problems.push("server cards: " + shown + "; expected " + want.servers.join(", "));
  for (const s of servers) {
    const card = view.servers[s.id];
    if (!card) { problems.push(s.id + ": no server card"); continue; }
    if (!card.dot.split(" ").includes("dot-" + s.status)) problems.push(s.id + ": dot class '" + card.dot + "', the API says " + s.status);
    if (card.label !== STATUS_WORDS[s.status] || card.role !== "img") problems.push(s.id + ": dot role '" + card.role + "' label '" + card.label + "'");
    if (card.caption !== pageCaption(s)) problems.push(s.id + ": caption '" + card.caption + "', the API says '" + s.caption + "'");
    if (card.badges.includes("stale") !== s.metrics_stale) problems.push(s.id + ": stale badge " + card.badges.join("|") + ", metrics_stale " + s.metrics_stale);
    if (card.badges.includes(NO_DATA_BADGE) !== s.flags.includes("no_data")) problems.push(s.id + ": no-data badge " + card.badges.join("|") + ", flags " + s.flags);
    if (card.reportGreyed !== s.metrics_stale) problems.push(s.id + ": its report's facts greyed " + card.reportGreyed + ", metrics_stale " + s.metrics_stale);
    if (s.metrics_stale && !card.staleNote.startsWith("Stale:")) problems.push(s.id + ": stale data not marked ('" + card.staleNote + "')");
    const witnesses = card.facts["Witnesses"] || "";
    if (/\d\s*\/\s*\d/.test(witnesses) || !/witness/.test(witnesses)) problems.push(s.id + ": witnesses not in plain words: '" + witnesses + "'");
  }
  if (want.summary && view.summary !== want.summary) problems.push("summary '" + view.summary + "'; expected '" + want.summary + "'");
  if (!want.unreachable) return problems;
  const u = servers.find(s => s.id === want.unreachable);
  const caption = u && "Unreachable from your servers (" + u.witnesses.failing + " of " + u.witnesses.eligible + " servers can't see it)";
  if (!u || u.status !== "unreachable") problems.push("the API shows " + want.unreachable + " as " + (u && u.status) + ", not unreachable");
  else if (u.caption !== caption || u.caption !== want.caption) problems.push("the API's caption for " + u.id + " is '" + u.caption + "'; expected '" + want.caption + "'");
  return problems;
}

function compareRoutes(view, routes) {
  const problems = [];
  for (const r of routes) {
    const card = view.routes[r.id];
    if (!card) { problems.push("route " + r.id + ": no card"); continue; }
    if (card.rotation.join(", ") !== r.servers.join(", ")) problems.push("route " + r.id + ": in rotation " + card.rotation + ", the API says " + r.servers);
    if (card.degraded !== r.degraded || (r.degraded && !card.reason.includes(r.reason))) problems.push("route " + r.id + ": degraded '" + card.reason + "'");
  }
  return problems;
}

function compareMatrix(view, detail) {
  const problems = [];
  const observers = new Map(detail.observers.map(o => [o.id, o]));
  const target = want.unreachable;
  for (const id of want.failing_observers) {
    const o = observers.get(id), cell = view.cells[id + " -> " + target];
    if (!o || o.streak.failing === 0) problems.push("the API does not show " + id + " failing " + target);
    if (!cell) { problems.push("matrix: no cell " + id + " -> " + target); continue; }
    if (!cell.classes.includes("fail")) problems.push("matrix: cell " + id + " -> " + target + " is '" + cell.classes.join(" ") + "', not fail");
    if (o && o.streak.failing > 0 && !cell.title.includes(o.last_reason)) problems.push("matrix: the tooltip of " + id + " -> " + target + " ('" + cell.title + "') lacks " + o.last_reason);
  }
  for (const id of want.reaching_observers) {
    const cell = view.cells[id + " -> " + target];
    if (!cell || !cell.classes.includes("ok")) problems.push("matrix: cell " + id + " -> " + target + " is not ok: " + JSON.stringify(cell));
  }
  return problems;
}

async function compareWithApi(page) {
  const [routes, servers, detail] = await Promise.all(
    [apiGet("/v1/routes"), apiGet("/v1/servers"), apiGet("/v1/servers/" + encodeURIComponent(want.unreachable))]);
  const view = await pageView(page);
  const problems = [...compareServers(view, servers), ...compareRoutes(view, routes), ...compareMatrix(view, detail)];
  // The blocked server's witnesses, in words: "2 of 3 witnesses can't reach it: 2 of 2 in ..".
  const u = servers.find(s => s.id === want.unreachable), card = view.servers[want.unreachable];
  const words = u.witnesses.failing + " of " + u.witnesses.eligible + " witnesses can't reach it: ";
  if (card && !(card.facts["Witnesses"] || "").startsWith(words)) problems.push(u.id + ": witnesses read '" + (card.facts["Witnesses"] || "") + "', not '" + words + "...'");
  return problems;
}

// The page's source: self-contained, and never HTML from strings.
async function checkSource() {
  const html = await (await fetch(want.url)).text();
  check(!/\b(src|href)\s*=\s*["']?(https?:)?\/\//i.test(html), "the page loads something from elsewhere");
  check(!/innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(html), "the page builds HTML from strings");
}

async function wrongToken(page) {
  await page.fill("#token", want.wrong_token);
  await page.click("#login-form button[type=submit]");
  await page.waitForSelector("#auth-error:not([hidden])", { timeout: 15000 });
  const message = await page.textContent("#auth-error");
  check(message.includes("401"), "a wrong token: the message reads '" + message + "'");
  check(await page.isVisible("#token"), "a wrong token: no token field to try another");
  check(await page.isHidden("#board"), "a wrong token: the board is still shown");
}

async function rightToken(page, requests) {
  await page.fill("#token", want.token);
  await page.click("#login-form button[type=submit]");
  await page.waitForSelector("#servers [data-server='" + want.unreachable + "'] .dot-unreachable", { timeout: 45000 });
  check(await page.isHidden("#auth-error"), "the error message stays after a good token");
  failures.push(...await eventually(() => compareWithApi(page), 30000));
  const polled = await eventually(async () => requests.some(u => /\/v1\/routes\?index=\d+&wait=60s/.test(u)) ? [] : ["no long-poll"], 10000);
  check(polled.length === 0, "the page sent no long-poll (/v1/routes?index=N&wait=60s); it asked: " + requests.join(" "));
}

// A wall screen: the page opened as /#token=TOKEN signs in by itself, and
// the token leaves the address bar and the tab's history at once; no request
// carries it but in its Authorization header. A powered-off server (daemon
// and listener stopped) shows "Down", its last report's data greyed and
// marked stale, and the summary names it.
async function runDown(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [], requests = [];
  page.on("pageerror", error => errors.push(error.message));
  page.on("request", request => requests.push(request.url()));
  await page.goto(want.url + "#token=" + encodeURIComponent(want.token), { timeout: 15000 });
  await page.waitForSelector("#servers [data-server]", { timeout: 30000 });
  check(await page.isHidden("#login"), "opened with #token=, the page still asks for the token");
  const where = await page.evaluate(() => ({ href: location.href, hash: location.hash, length: history.length,
    kept: sessionStorage.getItem("meshnode.token") }));
  check(!where.href.includes(want.token) && where.hash === "", "the token stays in the address bar: " + where.href);
  // about:blank, then this page: the token's URL was replaced, not followed by another entry.
  check(where.length === 2, "the tab's history holds " + where.length + " entries, not 2 (about:blank, the page)");
  check(where.kept === want.token, "the token from the fragment is not in the tab's session storage");
  check(!requests.some(u => u.includes(want.token)), "a request's URL carries the token: " + requests.join(" "));
  const down = "#servers [data-server='" + want.down + "']";
  failures.push(...await eventually(async () => {
    const [routes, servers] = await Promise.all([apiGet("/v1/routes"), apiGet("/v1/servers")]);
    const view = await pageView(page), card = view.servers[want.down];
    const s = servers.find(x => x.id === want.down);
    const problems = [...compareServers(view, servers), ...compareRoutes(view, routes)];
    if (!s || !isDown(s)) problems.push("the API does not show " + want.down + " down (no report, every witness failing): " + JSON.stringify(s));
    if (!card || card.caption !== "Down" || !card.classes.includes("down") || !card.downWhy) problems.push(want.down + ": not captioned Down: " + JSON.stringify(card));
    if (card && !card.reportGreyed) problems.push(want.down + ": its last report's data is not greyed");
    if (card && (card.caption || "").includes("Unreachable from your servers")) problems.push(want.down + ": still 'Unreachable from your servers'");
    return problems;
  }, 45000));
  await page.waitForSelector(down, { timeout: 1000 });
  await page.screenshot({ path: want.screenshot, fullPage: true });
  console.log("screenshot: " + want.screenshot);
  check(errors.length === 0, "script errors on the page: " + errors.join("; "));
  // Back is the blank page the tab opened with, not the URL that held the token.
  await page.goBack({ timeout: 15000 });
  check(page.url() === "about:blank", "back from the page lands on " + page.url());
}

async function run(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [], requests = [], origin = new URL(want.url).origin;
  page.on("pageerror", error => errors.push(error.message));
  // The page's Content-Security-Policy (docs/API.md, "GET /") must allow
  // all it does: a refused script, style or request is an error here.
  page.on("console", message => {
    if (message.type() === "error" && /Content Security Policy/i.test(message.text())) errors.push(message.text());
  });
  page.on("request", request => {
    requests.push(request.url());
    check(new URL(request.url()).origin === origin, "a request to another origin: " + request.url());
  });
  await page.goto(want.url, { timeout: 15000 });
  await wrongToken(page);
  await rightToken(page, requests);
  // The token stays with the tab: a reload shows the board without asking.
  await page.reload({ timeout: 15000 });
  await page.waitForSelector("#servers [data-server]", { timeout: 15000 });
  check(await page.isHidden("#login"), "after a reload the page asks for the token again");
  await page.waitForTimeout(300);  // the matrix and fonts settle before the picture
  await page.screenshot({ path: want.screenshot, fullPage: true });
  console.log("screenshot: " + want.screenshot);
  // A phone: the page does not scroll sideways (the matrix scrolls in its box).
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  check(overflow <= 1, "390 px wide, the page scrolls sideways by " + overflow + " px");
  await page.screenshot({ path: want.phone_screenshot, fullPage: true });
  console.log("phone screenshot: " + want.phone_screenshot);
  await page.setViewportSize({ width: 1280, height: 900 });
  await perCountry(page, requests);
  await followsHealing(page);
  check(errors.length === 0, "script errors on the page: " + errors.join("; "));
}

// The rotation for users in one country (GET /v1/routes?country=): picked
// on the page, it is asked for and shown as the API answers it.
async function perCountry(page, requests) {
  await page.selectOption("#country", "NL");
  const asked = await eventually(async () => requests.some(u => /\/v1\/routes\?country=NL/.test(u)) ? [] : ["not asked"], 10000);
  check(asked.length === 0, "choosing NL, the page did not ask /v1/routes?country=NL");
  failures.push(...await eventually(async () => compareRoutes(await pageView(page), await apiGet("/v1/routes?country=NL")), 20000));
  await page.selectOption("#country", "");
}

// The block ends (the block file emptied, renamed into place as the fleet
// harness does): without a reload, the page must show the server back in
// service, its dot ok and every route serving it, from the long-poll alone.
async function followsHealing(page) {
  const navigations = [];
  page.on("framenavigated", frame => { if (frame === page.mainFrame()) navigations.push(frame.url()); });
  writeFileSync(want.block_file + ".new", "");
  renameSync(want.block_file + ".new", want.block_file);
  const healed = "#servers [data-server='" + want.unreachable + "'] .dot-ok";
  try {
    await page.waitForSelector(healed, { timeout: 75000 });
  } catch (error) {
    const api = await apiGet("/v1/servers/" + encodeURIComponent(want.unreachable)).catch(e => ({ status: e.message }));
    const shown = (await pageView(page)).servers[want.unreachable];
    failures.push("the page did not show " + want.unreachable + " back in service by itself within 75 s (the API says " +
      api.status + ", the page shows " + JSON.stringify(shown) + ")");
    return;
  }
  check(navigations.length === 0, "the page reloaded itself to follow the change: " + navigations.join(" "));
  failures.push(...await eventually(async () => {
    const [routes, servers] = await Promise.all([apiGet("/v1/routes"), apiGet("/v1/servers")]);
    const view = await pageView(page);
    const healed = want.servers.length + " of " + want.servers.length + " servers in rotation; every server ok";
    return [...compareRoutes(view, routes),
            ...compareServers(view, servers).filter(p => !p.startsWith("the API") && !p.startsWith("summary")),
            ...(view.summary === healed ? [] : ["summary after the heal '" + view.summary + "'; expected '" + healed + "'"])];
  }, 30000));
}

const limit = setTimeout(() => {
  console.log("FAIL: the page test ran over " + want.timeout_ms + " ms");
  process.exit(1);
}, want.timeout_ms || 90000);
const browser = await chromium.launch({ executablePath: want.chromium, headless: true, args: CHROMIUM_FLAGS, timeout: 30000 });
try {
  await checkSource();
  if (want.phase === "down") await runDown(browser);
  else await run(browser);
} catch (error) {
  failures.push("the test stopped: " + error.message);
} finally {
  await browser.close();
  clearTimeout(limit);
}
for (const failure of failures) console.log("FAIL: " + failure);
console.log(failures.length === 0 ? "PASS: the status page in Chromium" : failures.length + " check(s) failed");
process.exit(failures.length === 0 ? 0 : 1);
