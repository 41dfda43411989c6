// The pit display and dealer console of one table. No build step, no external resources.
// The token comes from the address's fragment (#token=..., never sent to the server) or the
// login form, and is kept in this tab's sessionStorage only. Every request sends it as
// "Authorization: Bearer"; the event stream is read with fetch() so it can send it too.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const TOKEN_KEY = "tablectl-token";
  const SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };
  let token = null, role = null, commands = [], doc = null, refreshTimer = null, lastKey = null;
  // Hold'em seats and stacks before the hand starts come only in the `seats` event.
  let seating = null;
  let streamAbort = null, retry = 500;
  // The stream sends `status` every 2 s when nothing else happens (STATUS_INTERVAL_S in
  // controller/api/app.py): one silent for several of them is a controller that stopped
  // answering without closing it (paused, or a network that drops every packet), and what the
  // page shows is no longer the table.
  const SILENT_MS = 8000;
  // How long a command waits for its answer before the page says it has none yet.
  const ANSWER_MS = 4000;
  // When the table was last heard, and since when it is lost (null: live).
  let heardAt = null, lostAt = null;
  // The token was replaced or withdrawn: the page asks nothing more until a new one is given.
  let signedOut = false;

  // ---- words ------------------------------------------------------------------------------
  function pair(table, key) {
    const v = (window.L[table] || {})[key];
    return v || [key, key];
  }
  function bi(table, key) {
    const [zh, en] = pair(table, key);
    const s = document.createElement("span");
    s.className = "bi";
    if (zh === en) { s.textContent = en; return s; }
    const z = document.createElement("span"); z.lang = "zh-Hant"; z.textContent = zh;
    const e = document.createElement("span"); e.lang = "en"; e.textContent = en;
    s.append(z, " ", e);
    return s;
  }
  function el(tag, attrs, ...children) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") n.className = v;
      else if (k === "text") n.textContent = v;
      else if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
      else n.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c !== null && c !== undefined) n.append(c);
    return n;
  }
  // A device's or a person's own words (a malfunction's text, a serial number, a player's name,
  // a void's reason), set apart from the page's: a right-to-left override or a name written
  // right to left in them turns nothing the page writes around them.
  function own(t) {
    return el("bdi", { text: String(t) });
  }
  // replaceChildren() would print "null" for a missing part: leave those out.
  function put(node, ...children) {
    node.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
    return node;
  }
  function fillLabels() {
    for (const n of document.querySelectorAll("[data-l]")) put(n, bi("labels", n.dataset.l));
  }

  // ---- token ----------------------------------------------------------------------------
  function takeToken() {
    const m = location.hash.match(/token=([^&]+)/);
    if (m) {
      sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
      history.replaceState(null, "", location.pathname);
    }
    return sessionStorage.getItem(TOKEN_KEY);
  }
  // problem: true (a token the controller does not know) or the label that says what is wrong
  function showLogin(problem) {
    $("table").hidden = true;
    $("login").hidden = false;
    put($("login-error"), problem ? bi("labels", problem === true ? "wrong_token" : problem) : "");
  }
  // A browser puts only plain ASCII in a request's header: with any other letter (a full-width
  // keyboard types them) every request would fail in the page, as if the controller were down.
  const sendable = (t) => /^[\x20-\x7e]+$/.test(t);

  async function api(path, options) {
    const opts = Object.assign({ headers: {} }, options || {});
    opts.headers = Object.assign({ Authorization: "Bearer " + token }, opts.headers);
    let r;
    try {
      r = await fetch(path, opts);
    } catch (e) {
      // The controller is down or restarting: no answer at all, said in words by the caller.
      return { status: 0, body: { ok: false, error: { code: "unreachable" } } };
    }
    let body = null;
    try { body = await r.json(); } catch (e) { body = { ok: false, error: { message: r.statusText } }; }
    if (r.status === 401) signOut();
    return { status: r.status, body };
  }

  // A 401 for a token the controller took before (a role is known) is a token replaced or
  // withdrawn by a reload, not one mistyped: said so, with the way out. No request is made
  // again with it (the stream's retries stop), and the table is hidden: it is no longer heard.
  function signOut(why) {
    const problem = why || (role ? "token_replaced" : true);
    signedOut = true;
    role = null;
    if (streamAbort) streamAbort.abort();
    clearTimeout(refreshTimer);
    refreshTimer = null;
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin(problem);
  }

  // ---- start ----------------------------------------------------------------------------
  async function start() {
    fillLabels();
    $("login").addEventListener("submit", (e) => {
      e.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $("token-input").value.trim());
      $("token-input").value = "";
      start2();
    });
    $("command-form").addEventListener("submit", sendGenericCommand);
    $("command-name").addEventListener("change", renderGenericParams);
    start2();
  }
  async function start2() {
    signedOut = false;
    token = takeToken();
    if (!token) return showLogin(false);
    if (!sendable(token)) { sessionStorage.removeItem(TOKEN_KEY); return showLogin("token_ascii"); }
    const who = await api("/api/whoami");
    // Opened while the controller is down (a pit PC that starts first): said, not a blank
    // page, and tried again until it answers.
    $("unreachable").hidden = who.status !== 0;
    if (who.status === 0) {
      put($("unreachable"), bi("labels", "not_reached"), " ", el("b", { text: clock(new Date()) }));
      setTimeout(start2, 2000);
      return;
    }
    if (who.status !== 200) return;
    role = who.body.role;
    commands = who.body.commands;
    $("login").hidden = true;
    $("table").hidden = false;
    document.body.dataset.role = role;
    put($("role"), bi("labels", role));
    buildGenericForm();
    await refresh();
    stream();
  }

  async function refresh() {
    const r = await api("/api/table");
    if (r.status === 200) render(r.body);
  }
  function refreshSoon() {
    if (refreshTimer) return;
    refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, 60);
  }

  // ---- the stream ---------------------------------------------------------------------------
  async function stream() {
    if (signedOut) return;
    if (streamAbort) streamAbort.abort();
    const ctl = new AbortController();
    streamAbort = ctl;
    // Armed again by every byte heard: a stream (or a connection that never answers) silent
    // for SILENT_MS is given up, the table said lost, and a new one tried.
    let silent = null;
    const watch = () => {
      clearTimeout(silent);
      silent = setTimeout(() => { ctl.silent = true; ctl.abort(); }, SILENT_MS);
    };
    watch();
    try {
      const r = await fetch("/api/events", { headers: { Authorization: "Bearer " + token }, signal: ctl.signal });
      if (r.status === 401) { clearTimeout(silent); signOut(); return; }
      if (!r.ok || !r.body) throw new Error("stream " + r.status);
      retry = 500;
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        watch();
        heardAt = new Date();
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i); buf = buf.slice(i + 2);
          const f = {};
          for (const line of block.split("\n")) {
            const j = line.indexOf(": ");
            if (j > 0) f[line.slice(0, j)] = line.slice(j + 2);
          }
          if (f.data) onMessage(f.event || "message", JSON.parse(f.data));
        }
      }
    } catch (e) {
      if (ctl.signal.aborted && !ctl.silent) { clearTimeout(silent); return; }
    }
    clearTimeout(silent);
    if (signedOut) return;
    setLink(false);
    retry = Math.min(retry * 2, 5000);
    setTimeout(stream, retry);
  }
  // Down: the page keeps the last table it heard, marked stale with the time it was last
  // heard (up: the new snapshot is drawn, live).
  function setLink(up) {
    const n = $("link");
    n.className = "link " + (up ? "up" : "down");
    put(n, bi("labels", up ? "stream_up" : "stream_down"));
    const box = $("stale");
    if (up) {
      lostAt = null;
      box.hidden = true;
      delete document.body.dataset.stale;
    } else if (!lostAt) {
      lostAt = heardAt || new Date();
      document.body.dataset.stale = "true";
      box.hidden = false;
      put(box, bi("labels", "stale"), " ", el("b", { "data-testid": "stale-since", text: clock(lostAt) }),
        " · ", bi("labels", "stream_down"));
    }
  }
  // A time shown to the pit: the browser's own clock (the pit PC's, Macau time at a Macau
  // table) with its offset from UTC always written beside it, "14:03:07 UTC+8".
  function clock(d) {
    const p = (x) => String(x).padStart(2, "0");
    const off = -d.getTimezoneOffset(), a = Math.abs(off);
    const zone = off === 0 ? "UTC" : "UTC" + (off > 0 ? "+" : "-") + Math.floor(a / 60) + (a % 60 ? ":" + p(a % 60) : "");
    return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${zone}`;
  }
  function onMessage(kind, data) {
    // A new connection's snapshot is the table as it is now, whatever came before: after a
    // controller restart the stream numbers its events from 1 again, so an older page's
    // event_id must not make it look stale.
    if (kind === "snapshot") { put($("events")); doc = null; lastKey = null; render(data); setLink(true); }
    else if (kind === "status") renderStatus(data);
    else if (kind === "resync") { refresh(); stream(); }
    else if (kind === "revoked") signOut("token_replaced");
    else if (kind === "history") logEvent(data);
    else if (kind === "table") {
      if (data.kind === "seats") seating = { round: data.round, stacks: data.stacks || {}, button: data.button };
      logEvent(data);
      refreshSoon();
    }
  }

  // ---- rendering ------------------------------------------------------------------------------
  function render(d) {
    // Answers can cross on the wire: never draw an older table over a newer one.
    if (doc && typeof d.event_id === "number" && typeof doc.event_id === "number" && d.event_id < doc.event_id) return;
    doc = d;
    const v = d.view || {};
    const r = v.round || null;
    $("table-id").textContent = d.table;
    put($("game-title"), bi("games", d.game.id));
    $("regulation").textContent = d.game.regulation || "";
    put($("mode"), bi("modes", d.mode));
    $("round-no").textContent = r ? String(r.round) : "—";
    renderStatus({ state: d.state, light: d.light, devices: d.devices, mode: d.mode });
    // Draw the layout again only when it changed: a control must not vanish under the hand.
    const key = JSON.stringify([d.state, d.mode, v, seating, supervisorConditions(d, v), !!(d.light && d.light.buzzer === "silenced")]);
    if (key === lastKey) return;
    lastKey = key;
    renderIrregularity(r, d.state);
    keepFocus(() => {
      renderHands(d, v, r);
      renderSettlement(r);
      renderControls(d, v, r);
    });
  }

  function renderStatus(s) {
    put($("state"), bi("states", s.state));
    $("state").dataset.state = s.state;
    document.body.dataset.state = s.state;
    const colour = s.light ? s.light.colour : "off";
    $("light").className = "lamp " + colour + (s.light && /blink|malfunction|action/.test(s.light.signal) ? " blink" : "");
    $("light").dataset.colour = colour;
    put($("light-text"), bi("lights", colour));
    // The buzzer of the red blinking light: sounding, or silenced while the light stays.
    const buzzer = (s.light && s.light.buzzer) || "off";
    $("buzzer").dataset.buzzer = buzzer;
    $("buzzer").hidden = buzzer === "off";
    put($("buzzer"), buzzer === "off" ? null : bi("buzzer", buzzer));
    const tb = $("devices");
    put(tb);
    for (const dev of s.devices || []) {
      const id = dev.identity || {};
      // A right-to-left override in its serial number must not turn the firmware version
      // after it around.
      const ident = id.vendor ? [own(id.vendor), " ", own(id.model), " · ", own(id.serial), " · fw ",
        own(id.firmware_version), " · ", String(id.firmware_hash || "").slice(0, 12)] : ["—"];
      const conds = el("td", {});
      for (const c of dev.conditions || []) conds.append(el("span", { class: "cond" }, bi("conditions", c)));
      tb.append(el("tr", { "data-device": dev.device, class: "link-" + dev.link },
        el("td", {}, el("b", {}, own(dev.device)), " ", el("span", { class: "muted", text: dev.class })),
        el("td", { class: "link-cell" }, bi("links", dev.link),
          // Why a device that is not up cannot link (its words and the configuration's: the
          // advice says what to check), so the pit need not read the log.
          dev.problem ? el("div", { class: "problem", "data-testid": "device-problem" },
            bi("labels", "problem"), " ", el("span", {}, own(dev.problem))) : null),
        el("td", { text: dev.last_heard_s === null || dev.last_heard_s === undefined ? "—" : dev.last_heard_s.toFixed(1) + " s" }),
        el("td", { class: "ident" }, ...ident),
        conds));
    }
  }

  function renderIrregularity(r, state) {
    const box = $("irregularity");
    const rulings = r ? r.rulings || [] : [];
    let ruling = rulings.length ? rulings[rulings.length - 1] : null;
    if (r && r.void && (!ruling || r.void.cause === "supervisor")) {
      ruling = { irregularity: r.void.cause, article: r.void.article, reason: r.void.reason, remedy: r.void.remedy, needs_supervisor: r.void.needs_supervisor };
    }
    if (!ruling) { box.hidden = true; put(box); return; }
    box.hidden = false;
    box.className = "irregularity " + (ruling.remedy === "round_void" ? "void" : "notice");
    put(box, 
      el("div", { class: "what" }, bi("irregularities", ruling.irregularity)),
      el("div", { class: "article", "data-testid": "article" }, bi("labels", "article"), " ", el("b", { text: ruling.article || "—" })),
      el("div", { class: "remedy" }, bi("remedies", ruling.remedy)),
      el("div", { class: "reason", lang: "en" }, own(ruling.reason || "")),
      ruling.needs_supervisor || state === "malfunction" ? el("div", { class: "supervisor" }, bi("labels", "needs_supervisor")) : null);
  }

  function cardEl(c) {
    if (!c) return el("span", { class: "card back", "data-card": "back", title: "face down" });
    const rank = c.slice(0, -1), suit = c.slice(-1).toLowerCase();
    const red = suit === "h" || suit === "d";
    return el("span", { class: "card" + (red ? " red" : ""), "data-card": c }, rank.replace("T", "10"), el("small", { text: SUITS[suit] || suit }));
  }
  function handEl(cards) {
    const h = el("div", { class: "cards" });
    for (const c of cards || []) h.append(cardEl(c));
    return h;
  }

  function renderHands(d, v, r) {
    const hands = v.hands || {};
    const st = r && r.settlement ? r.settlement : null;
    const sh = st && st.hands ? st.hands : {};
    const cr = $("croupier");
    const pan9 = d.game.id === "super-pan-9";
    cr.hidden = (pan9 || d.game.id === "texas-holdem") && !hands.croupier;
    put(cr, el("h3", {}, bi("labels", "croupier")), handEl(hands.croupier),
      sh.croupier && sh.croupier.category ? el("div", { class: "category", text: sh.croupier.category + (sh.croupier.qualifies === false ? " · not qualified" : "") }) : null);
    const board = $("board");
    board.hidden = !hands.board;
    if (hands.board) put(board, el("h3", {}, bi("labels", "board")), handEl(hands.board));
    if (v.holdem && v.holdem.street) {   // seated but no hand yet: no board, no pot
      board.hidden = false;
      if (!hands.board) put(board, el("h3", {}, bi("labels", "board")));
      board.append(el("div", { class: "pot", "data-testid": "pot" }, bi("labels", "pot"), el("b", { text: " " + v.holdem.pot }), " · ", bi("streets", v.holdem.street)));
      board.append(potsEl(v.holdem.pots || [], (r && r.settlement && r.settlement.pots) || []));
      // 11/2008 art. 9(2): a void hand has no pot; each seat got back what it put in
      if (v.holdem.returned) board.append(el("div", { class: "pot-returned", "data-testid": "pot-returned" }, bi("labels", "pot_returned"), " " + Object.entries(v.holdem.returned).map(([seat, chips]) => `${seat}: ${chips}`).join(", ")));
    }
    const sa = $("set-aside");
    sa.hidden = !(v.set_aside && v.set_aside.length);
    if (!sa.hidden) put(sa, el("h3", {}, bi("labels", "set_aside")), handEl(v.set_aside));
    const dice = $("dice");
    dice.hidden = !(r && r.dice);
    if (r && r.dice) put(dice, el("h3", {}, bi("labels", "dice")), ...r.dice.map((n) => el("span", { class: "die", text: "⚀⚁⚂⚃⚄⚅"[n - 1] || String(n), title: String(n) })), el("b", { text: " = " + r.dice.reduce((a, b) => a + b, 0) }));

    const boxes = $("boxes");
    put(boxes);
    const bets = r ? r.bets || [] : [];
    const decisions = r ? r.decisions || [] : [];
    const wagers = st && st.wagers ? st.wagers : [];
    const expected = v.expected ? v.expected.recipient : null;
    for (let n = 1; n <= d.game.boxes; n++) {
      const name = "box " + n;
      const myBets = bets.filter((b) => b.box === n);
      const isBanker = r && r.banker === n;
      const seated = r && r.seats && r.seats.includes(n);
      const classes = ["box"];
      if (myBets.length || hands[name] || isBanker || seated) classes.push("active");
      if (r && (r.void_boxes || []).includes(n)) classes.push("void");
      if (expected === name) classes.push("expected");
      const hd = v.holdem || (seating && r && seating.round === r.round ? { stacks: seating.stacks, folded: [], to_act: null } : null);
      if (hd && seating && r && seating.round === r.round) hd.button = seating.button;
      if (hd && hd.to_act === n) classes.push("to-act");
      if (hd && (hd.folded || []).includes(n)) classes.push("folded");
      const b = el("div", { class: classes.join(" "), "data-testid": "box-" + n },
        el("h3", {}, bi("labels", "box"), " ", el("b", { text: String(n) }), isBanker ? el("span", { class: "tag" }, bi("labels", "banker")) : null,
          r && (r.button === n || (hd && hd.button === n)) ? el("span", { class: "tag", text: "D" }) : null));
      if (isBanker && r.capital) b.append(el("div", { class: "muted" }, bi("labels", "capital"), " " + r.capital));
      if (isBanker && r.adjust) b.append(el("div", { class: "adjust", "data-testid": "adjust" }, bi("labels", "adjust"), el("b", { text: " " + (r.adjust > 0 ? "+" : "") + r.adjust })));
      // 261/96/M art. 5(5): the co-bankers join the banker, listed in the order placed
      if (isBanker && (r.co_bankers || []).length) {
        const ul = el("ul", { class: "co-bankers", "data-testid": "co-bankers" });
        for (const c of r.co_bankers) {
          ul.append(el("li", { "data-co-banker": c.house ? "house" : c.player },
            bi("labels", c.house ? "house" : "co_banker"), c.house ? null : el("b", {}, " ", own(c.player)),
            c.seat ? el("span", { class: "muted" }, " · ", bi("labels", "box"), " " + c.seat) : null,
            el("span", { text: " · " + c.capital })));
        }
        b.append(ul);
      }
      if (hd && hd.stacks && hd.stacks[String(n)] !== undefined) {
        b.append(el("div", { class: "stack", "data-testid": "stack-" + n }, bi("labels", "stack"), el("b", { text: " " + hd.stacks[String(n)] }),
          (hd.folded || []).includes(n) ? el("span", { class: "tag" }, bi("labels", "fold")) : null,
          hd.to_act === n ? el("span", { class: "tag act" }, bi("labels", "to_act")) : null));
      }
      const ul = el("ul", { class: "bets" });
      for (const bet of myBets) ul.append(el("li", { "data-wager": bet.wager }, bi("wagers", bet.wager), el("b", { text: " " + bet.amount }), bet.player ? el("span", { class: "muted" }, " · ", own(bet.player)) : null, removeBetButton(d, bet)));
      b.append(ul);
      // Q2 seated_player: the player marked seated at the box (null: the box's own player)
      const sitting = r ? (r.seated || []).find((x) => x.box === n) : null;
      if (sitting) b.append(el("div", { class: "seated", "data-testid": "seated-at-" + n }, bi("labels", "seated"), sitting.player ? el("b", {}, " ", own(sitting.player)) : null));
      if (hands[name]) b.append(handEl(hands[name]));
      if (sh[name] && sh[name].category) b.append(el("div", { class: "category", text: sh[name].category }));
      for (const dec of decisions.filter((x) => x.box === n)) b.append(el("div", { class: "decision " + dec.decision, "data-testid": "decision-" + n }, bi("labels", dec.decision)));
      const mine = wagers.filter((w) => w.box === n);
      if (mine.length) {
        const res = el("ul", { class: "results", "data-testid": "result-" + n });
        for (const w of mine) res.append(el("li", { class: w.net > 0 ? "win" : w.net < 0 ? "lose" : "even" }, bi("wagers", w.wager), " ", bi("outcomes", w.outcome), el("b", { class: "net", text: " " + (w.net > 0 ? "+" : "") + w.net })));
        b.append(res);
      }
      if (classes.includes("void")) b.append(el("div", { class: "void-tag" }, bi("labels", "void")));
      boxControls(b, n, d, r);
      boxes.append(b);
    }
  }

  // 11/2008 art. 10(2), 11(3), H3: the main pot and each side pot with the boxes that may
  // win it; once settled (same order) who took it and how much.
  function potsEl(pots, awarded) {
    const ul = el("ul", { class: "pots", "data-testid": "pots" });
    pots.forEach((p, i) => {
      const won = awarded[i] && awarded[i].shares ? Object.entries(awarded[i].shares) : [];
      ul.append(el("li", { "data-testid": "pot-" + i, "data-eligible": p.eligible.join(",") },
        el("div", {}, bi("labels", i ? "side_pot" : "main_pot"), i > 0 && pots.length > 2 ? " " + i : null, el("b", { text: " " + p.amount })),
        el("div", { class: "muted" }, bi("labels", "eligible"), " " + p.eligible.join(", ")),
        won.length ? el("div", { class: "won" }, bi("labels", "won_by"), " " + won.map(([seat, chips]) => `${seat}: ${chips}`).join(", ")) : null));
    });
    return ul;
  }

  function renderSettlement(r) {
    const s = $("settlement");
    const st = r && r.settlement;
    if (!st && !(r && r.void)) { s.hidden = true; return; }
    s.hidden = false;
    if (r.void) {
      s.className = "settlement void";
      put(s, el("h3", {}, bi("states", "round_void")), el("div", {}, bi("labels", "returned")));
      return;
    }
    s.className = "settlement";
    const total = (st.wagers || []).reduce((a, w) => a + (w.net || 0), 0);
    put(s, el("h3", {}, bi("labels", "settlement")),
      el("div", {}, bi("labels", "house_net"), el("b", { "data-testid": "house-net", text: " " + (st.house_net !== undefined ? st.house_net : -total) })),
      st.commission ? el("div", {}, bi("labels", "commission"), el("b", { text: " " + st.commission })) : null);
    // Super Pan 9: each share of the bank, banker first, co-bankers, the house last (art. 5(5))
    if ((st.bank || []).length > 1) {
      const ul = el("ul", { class: "bank", "data-testid": "bank" });
      for (const row of st.bank) {
        ul.append(el("li", { "data-share": row.role === "co_banker" ? row.name : row.role },
          bi("labels", row.role), row.role === "co_banker" ? el("b", {}, " ", own(row.name)) : null,
          el("b", { class: "net", text: " " + (row.net > 0 ? "+" : "") + row.net })));
      }
      s.append(ul);
    }
  }

  // ---- events ----------------------------------------------------------------------------------
  // What an event says, as parts: the page's words, and a device's or a person's own in own().
  function describe(e) {
    const list = (xs) => (xs || []).join(", ");
    switch (e.kind) {
      case "state": return [`${e.source} → ${e.dest}`];
      case "bet": return [`box ${e.box} ${e.wager} ${e.amount}`, e.player ? " · " : null, e.player ? own(e.player) : null];
      case "card": return [`${e.recipient} (${e.count})`];
      case "decision": return [`box ${e.box} ${e.decision}`];
      case "ruling": return [`${e.irregularity} · ${e.article}`];
      case "round_void": return [`${e.article || ""} `, own(e.reason || "")];
      case "round_not_played": return [own(e.reason || ""), ` · ${e.by || ""}`];
      case "device_link": return [own(e.device), ` ${e.link}`];
      case "device_refused": return [own(e.device), " ", own(e.reason || ""), ": ", own(e.text || "")];
      case "commands_held": return [`${e.role} · ${e.refused} ✗ / ${e.window_s} s`];
      case "commands_released": return [`${e.role} · ${e.turned_away} ✗ · ${e.why}`];
      case "device_condition": return [own(e.device), ` ${list(e.conditions)} `, own(e.what || "")];
      case "dice": return [`${(e.dice || []).join(" ")} = ${e.total}`];
      case "shuffle": return [own(e.device), ` ${e.status}`];
      case "hand_opened": case "hand_revealed": return [e.recipient];
      case "card_exposed": return [`${e.recipient} ${e.card}`];
      case "irregular_event": return [own(e.device), ` ${e.event}: `, own(e.reason || "")];
      case "box_void": return [`box ${e.box} · ${e.article}`];
      case "action": return [`box ${e.box} ${e.action}${e.added ? " +" + e.added : ""} · pot ${e.pot}`];
      case "blinds": return [`${e.small_blind || ""}/${e.big_blind || ""} · pot ${e.pot}`];
      case "seats": return [`${(e.seats || []).join(", ")} · D ${e.button}`];
      case "cards_needed": return [list(e.recipients)];
      case "settlement_refused": return [own(e.reason || "")];
      case "co_banker": return [e.house ? "house" : own(e.player), `${e.seat ? " · seat " + e.seat : ""} ${e.capital}`];
      default: return [];
    }
  }
  function logEvent(e) {
    const list = $("events");
    list.prepend(el("li", { "data-kind": e.kind }, bi("events", e.kind), el("span", { class: "muted" }, " ", ...describe(e))));
    while (list.children.length > 40) list.lastChild.remove();
  }

  // ---- controls ----------------------------------------------------------------------------------
  const can = (name) => commands.some((c) => c.name === name);

  // What the dealer is typing survives the page re-drawing itself on every table event.
  const drafts = {};
  function field(tag, key, attrs, options) {
    const n = el(tag, Object.assign({ "data-draft": key, "data-testid": key }, attrs));
    for (const o of options || []) n.append(o);
    if (key in drafts) n.value = drafts[key];
    const keep = () => { drafts[key] = n.value; };
    n.addEventListener("input", keep);
    n.addEventListener("change", keep);
    return n;
  }
  function keepFocus(fn) {
    const a = document.activeElement;
    const key = a && a.dataset ? a.dataset.draft : null;
    fn();
    if (key) { const again = document.querySelector(`[data-draft="${key}"]`); if (again) again.focus(); }
  }

  // A number as the dealer typed it, never rounded here: 12.5 goes to the table, which refuses
  // it by name, instead of becoming a bet of 12. An empty field is null; text stays text.
  function num(value) {
    const t = String(value).trim();
    if (t === "") return null;
    const n = Number(t);
    return Number.isFinite(n) ? n : t;
  }

  // Fields whose text is spent once the table takes the command: a void's reason, the cards
  // entered for a hand, a seating (its fields then show the seats as seated; the next hand
  // starts with nobody seated), a bet's seated tick (one seated player a box). A key ending
  // in "-" spends every field it begins. The bet forms keep their wager, amount and player
  // for the next bet.
  const SPENT = { void_round: ["void-reason"], enter_cards: ["enter-cards"], seat_players: ["seat-stack-", "button-seat"], place_bet: ["seated-"], exposed_card: ["exposed-card"] };
  const spent = (name, key) => (SPENT[name] || []).some((k) => (k.endsWith("-") ? key.startsWith(k) : key === k));

  async function send(name, args) {
    const msg = $("message");
    msg.className = "message busy";
    msg.textContent = "…";
    // A controller that stopped answering (paused, a network dropping packets) may still
    // take the command once it answers: the dealer is told to wait for it, not to resend it.
    const slow = setTimeout(() => put(msg, bi("commands", name), " … ",
      el("span", { "data-testid": "waiting" }, bi("labels", "no_answer_yet"))), ANSWER_MS);
    const r = await api("/api/commands/" + name, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(args || {}) });
    clearTimeout(slow);
    if (r.body && r.body.ok) {
      for (const key of Object.keys(drafts)) if (spent(name, key)) delete drafts[key];
      msg.className = "message ok";
      put(msg, bi("commands", name), " ✓");
      render(Object.assign({}, doc, { state: r.body.state, view: r.body.view, event_id: r.body.event_id }));
      refreshSoon();
    } else {
      msg.className = "message error";
      const err = (r.body && r.body.error) || {};
      put(msg, bi("commands", name), " ✗ ", r.status === 0
        ? el("span", { "data-testid": "error" }, bi("labels", "unreachable"))
        : el("span", { "data-testid": "error", text: `${r.status}: ${err.message || ""}` }));
    }
    return r;
  }
  function button(name, args, extra) {
    return el("button", Object.assign({ type: "button", "data-command": name, onclick: () => send(name, typeof args === "function" ? args() : args) }, extra || {}), bi("commands", name));
  }

  // Q Poker's Q2 reading seated_player: the player seated at a box is marked with his bet.
  const marksSeated = (d) => d.game.id === "q-poker" && (d.game.interpretations || {}).shared_box_decision === "seated_player";

  // A bet is taken back only while bets are open (the table refuses remove_bet after).
  function removeBetButton(d, bet) {
    if (d.state !== "bets_open" || !can("remove_bet")) return null;
    const args = Object.assign({ box: bet.box, wager: bet.wager }, bet.player ? { player: bet.player } : {});
    return el("button", { type: "button", class: "remove", "data-command": "remove_bet", title: pair("commands", "remove_bet").join(" "),
      "data-testid": ["remove-bet", bet.box, bet.wager].concat(bet.player ? [bet.player] : []).join("-"),
      onclick: () => send("remove_bet", args) }, bi("commands", "remove_bet"));
  }

  function boxControls(b, n, d, r) {
    if (!r) return;
    if (d.state === "bets_open" && can("place_bet") && (d.game.wagers || []).length && !(r.banker === n)) {
      const sel = field("select", "wager-" + n, { "aria-label": "wager" }, d.game.wagers.map((w) => el("option", { value: w, text: pair("wagers", w).join(" ") })));
      const amt = field("input", "amount-" + n, { type: "number", min: "1", step: "1", value: "10", "aria-label": "amount", class: "amount" });
      // Q Poker under Q2's seated_player (89/2004 art. 6(3), 9(2)): the bet's player, and a
      // tick for the one seated at the box, who decides for it whoever bet first. The tick is
      // spent once the table takes the bet (SPENT); the name stays for his next bet.
      let who = null, sit = null;
      if (marksSeated(d)) {
        who = field("input", "player-" + n, { type: "text", placeholder: "客人 player", "aria-label": "player", size: "8" });
        sit = el("input", { type: "checkbox", "data-testid": "seated-" + n, "aria-label": "seated" });
        sit.checked = drafts["seated-" + n] === true;
        sit.addEventListener("change", () => { drafts["seated-" + n] = sit.checked; });
      }
      b.append(el("div", { class: "box-controls" }, sel, amt, who, sit ? el("label", { class: "seated-tick" }, sit, bi("labels", "seated")) : null,
        button("place_bet", () => {
          const args = { box: n, wager: sel.value, amount: num(amt.value) };
          if (who && who.value.trim() !== "") args.player = who.value;
          if (sit && sit.checked) args.seated = true;
          return args;
        }, { "data-testid": "bet-" + n })));
    }
    if (d.state === "player_decisions" && can("decide")) {
      // one play/fold per decision the table waits for, from whom it takes it: the table's own
      // list (no Hold'em, no void box, nothing decided; under Q Poker's seated_player reading
      // the seated player alone, whatever his own bets), not one per bet of the deciding wager
      for (const due of (r.pending_decisions || []).filter((x) => x.box === n)) {
        const args = (decision) => Object.assign({ box: n, decision }, due.player ? { player: due.player } : {});
        const suffix = due.player ? "-" + due.player : "";
        b.append(el("div", { class: "box-controls" },
          due.player ? el("span", { class: "muted" }, own(due.player)) : null,
          el("button", { type: "button", class: "play", "data-testid": "play-" + n + suffix, onclick: () => send("decide", args("play")) }, bi("labels", "play")),
          el("button", { type: "button", class: "fold", "data-testid": "fold-" + n + suffix, onclick: () => send("decide", args("fold")) }, bi("labels", "fold"))));
      }
    }
  }

  // The conditions only the supervisor clears (machine.py SUPERVISOR_CONDITIONS), as
  // "device: condition", from the public view and the devices' health.
  const SUPERVISOR_CONDITIONS = ["jam", "malfunction"];
  function supervisorConditions(d, v) {
    const found = new Set();
    for (const [dev, conds] of Object.entries(v.conditions || {})) {
      for (const c of conds || []) if (SUPERVISOR_CONDITIONS.includes(c)) found.add(dev + ": " + c);
    }
    for (const dev of d.devices || []) {
      for (const c of dev.conditions || []) if (SUPERVISOR_CONDITIONS.includes(c)) found.add(dev.device + ": " + c);
    }
    return [...found].sort();
  }

  function renderControls(d, v, r) {
    const c = $("controls");
    if (!commands.length) { c.hidden = true; return; }
    c.hidden = false;
    const q = $("quick");
    put(q);
    const s = d.state;
    const add = (...nodes) => q.append(el("div", { class: "group" }, ...nodes));
    if (s === "out_of_service" && can("open_table")) add(button("open_table"));
    if (s === "shuffling" && d.mode === "shoe" && can("deck_ready")) add(button("deck_ready"));
    if (s === "bets_open" && d.game.id === "super-pan-9" && can("set_banker")) {
      const seat = field("input", "banker-seat", { type: "number", min: "1", value: "1", "aria-label": "seat", class: "amount" });
      const cap = field("input", "banker-capital", { type: "number", min: "1", value: "1000", "aria-label": "capital", class: "amount" });
      // 261/96/M art. 5(1): a seat banks a third round in a row only when every player agrees;
      // the agreement is for one round, so the box is cleared once the command is sent.
      const agree = el("input", { type: "checkbox", "data-testid": "banker-all-agree", "aria-label": "all agree" });
      agree.checked = drafts["banker-all-agree"] === true;
      agree.addEventListener("change", () => { drafts["banker-all-agree"] = agree.checked; });
      add(seat, cap, el("label", {}, agree, bi("labels", "all_agree")), button("set_banker", () => {
        const args = { seat: num(seat.value), capital: num(cap.value) };
        if (agree.checked) args.all_agree = true;
        drafts["banker-all-agree"] = false;
        return args;
      }));
    }
    // 261/96/M art. 5(5), 5(3): once the banker is named, a player of another seat or the
    // house joins him with a capital, before the shake; the table refuses what the rules would.
    if (s === "bets_open" && d.game.id === "super-pan-9" && r && r.banker && can("co_bank")) {
      const who = field("input", "co-bank-player", { type: "text", placeholder: "客人 player", "aria-label": "player", size: "8" });
      // art. 5(5): "a player of another seat": the layout's seats but the banker's (from the
      // view), or none given; the table refuses what is still wrong (a seat under P10's order)
      const seats = [];
      for (let n = 1; n <= d.game.boxes; n++) if (n !== r.banker) seats.push(n);
      const seat = field("select", "co-bank-seat", { "aria-label": "seat" },
        [el("option", { value: "", text: "門 seat —" })].concat(seats.map((n) => el("option", { value: String(n), text: "門 seat " + n }))));
      if (seat.selectedIndex < 0) seat.value = "";     // the seat chosen before is the banker's now
      const cap = field("input", "co-bank-capital", { type: "number", min: "1", value: "100", "aria-label": "capital", class: "amount" });
      const house = el("input", { type: "checkbox", "data-testid": "co-bank-house", "aria-label": "house" });
      house.checked = drafts["co-bank-house"] === true;
      // art. 5(5): the house's capital is "previamente determinado"; where the configuration
      // sets it (view.house_co_bank_capital) the table takes no other, so the house's co-bank
      // shows it, fixed. A player's capital (and the house's where none is set) is typed; the
      // draft keeps the player's while the house's is shown.
      const fixed = v.house_co_bank_capital;
      const note = el("span", { class: "muted", "data-testid": "house-capital-predetermined" }, bi("labels", "predetermined"));
      const houseCapital = () => {
        const set = house.checked && fixed !== null && fixed !== undefined;
        cap.readOnly = set;
        cap.value = set ? String(fixed) : ("co-bank-capital" in drafts ? drafts["co-bank-capital"] : "100");
        note.hidden = !set;
      };
      houseCapital();
      house.addEventListener("change", () => { drafts["co-bank-house"] = house.checked; houseCapital(); });
      add(who, seat, cap, note, el("label", {}, house, bi("labels", "house")), button("co_bank", () => {
        if (house.checked) return { house: true, capital: num(cap.value) };
        const args = { player: who.value, capital: num(cap.value) };
        if (String(seat.value).trim() !== "") args.seat = num(seat.value);
        return args;
      }));
    }
    if (s === "bets_open" && d.game.id === "super-pan-9" && r && can("remove_co_bank")) {
      for (const c of r.co_bankers || []) {
        const name = c.house ? "house" : c.player;
        const args = c.house ? { house: true } : { player: c.player };
        add(el("button", { type: "button", "data-command": "remove_co_bank", "data-testid": "remove-co-bank-" + name, onclick: () => send("remove_co_bank", args) },
          bi("commands", "remove_co_bank"), " · ", c.house ? bi("labels", "house") : el("b", {}, own(c.player))));
      }
    }
    // Hold'em seating: one stack field per seat of the layout; a seat with chips typed is
    // seated with them, an empty one is not. Stacks go by seat, as typed, and the table
    // refuses a wrong one by name. Text fields: a number field reads a letter O typed for a
    // zero as empty, and the seat would be left out unsaid. Once seated, the fields show
    // the seating as the table took it. An empty button is left to the table (art. 1(2)).
    if (s === "bets_open" && d.game.id === "texas-holdem" && can("seat_players")) {
      const seated = v.holdem || null;
      const stacks = [];
      for (let n = 1; n <= d.game.boxes; n++) {
        const chips = seated && seated.stacks && seated.stacks[String(n)] !== undefined ? String(seated.stacks[String(n)]) : "";
        stacks.push([n, field("input", "seat-stack-" + n, { type: "text", inputmode: "numeric", value: chips, "aria-label": "seat " + n + " stack", class: "amount" })]);
      }
      const btn = field("input", "button-seat", { type: "text", inputmode: "numeric", value: seated && seated.button ? String(seated.button) : "", "aria-label": "button", class: "amount" });
      add(el("div", { class: "seat-stacks" }, bi("labels", "seats"), " · ", bi("labels", "stack"),
        ...stacks.map(([n, f]) => el("label", { class: "seat-stack" }, el("b", { text: String(n) }), f)),
        el("label", { class: "seat-stack" }, el("b", { text: "D" }), btn),
        button("seat_players", () => {
          const given = stacks.filter(([, f]) => f.value.trim() !== "");
          const args = { seats: given.map(([n]) => n), stacks: Object.fromEntries(given.map(([n, f]) => [String(n), num(f.value)])) };
          if (btn.value.trim() !== "") args.button = num(btn.value);
          return args;
        })));
    }
    if ((s === "bets_open") && can("close_bets") && d.game.id !== "super-pan-9") add(button("close_bets"));
    // 261/96/M art. 2(3): the banker declares the points he adds or takes before the shake
    if ((s === "bets_open" || s === "bets_closed") && d.game.id === "super-pan-9" && r && r.banker && can("declare_adjust")) {
      const pts = field("input", "adjust-points", { type: "number", step: "1", value: "0", "aria-label": "points", class: "amount" });
      add(pts, button("declare_adjust", () => ({ points: num(pts.value) })));
    }
    // art. 2(4): after a reshake ruling (or a shake the agitator refused) the banker shakes again
    if (((s === "bets_open" || s === "bets_closed") || (s === "dice_shaking" && v.reshake_owed)) && d.game.id === "super-pan-9" && can("shake")) add(button("shake"));
    if (s === "player_decisions" && d.game.id === "texas-holdem" && can("holdem_action") && v.holdem && v.holdem.to_act) {
      const seat = v.holdem.to_act;
      const nodes = [el("span", { class: "seat-to-act" }, bi("labels", "to_act"), el("b", { text: " " + seat }))];
      for (const a of v.holdem.legal || []) {
        if (a.min_to === null || a.min_to === undefined || a.action === "call" || a.action === "allin") {
          nodes.push(el("button", { type: "button", "data-action": a.action, onclick: () => send("holdem_action", { seat, action: a.action }) }, bi("actions", a.action), a.min_to ? " " + a.min_to : ""));
        } else {
          const amt = field("input", "action-" + a.action, { type: "number", min: String(a.min_to), max: String(a.max_to), value: String(a.min_to), "aria-label": a.action, class: "amount" });
          nodes.push(amt, el("button", { type: "button", "data-action": a.action, onclick: () => send("holdem_action", { seat, action: a.action, amount: num(amt.value) }) }, bi("actions", a.action)));
        }
      }
      add(...nodes);
    }
    if (["dealing", "player_decisions", "croupier_reveal"].includes(s) && can("misdeal")) add(button("misdeal", {}, { class: "warn" }));
    if (["dealing", "player_decisions"].includes(s) && can("exposed_card")) {
      const rec = field("select", "exposed-recipient", { "aria-label": "recipient" }, Object.keys(v.hands || {}).map((name) => el("option", { value: name, text: name })));
      // Which card: its place among the recipient's cards in the order dealt to it (1 = its
      // first, those set aside counted), never its face; "last" leaves card out and the table
      // takes the last one dealt. The view does not say whose the set-aside cards were, so
      // they widen every list; the table refuses a place it does not have, naming the range.
      const which = field("select", "exposed-card", { "aria-label": "card" });
      const places = () => {
        const n = ((v.hands || {})[rec.value] || []).length + (v.set_aside || []).length;
        const kept = drafts["exposed-card"] || "";
        put(which, el("option", { value: "", text: pair("labels", "exposed_last").join(" ") }),
          ...Array.from({ length: n }, (_, i) => el("option", { value: String(i + 1), text: String(i + 1) })));
        which.value = Number(kept) <= n ? kept : "";
        drafts["exposed-card"] = which.value;
      };
      places();
      rec.addEventListener("change", places);
      add(rec, el("label", {}, bi("labels", "exposed_which"), " ", which), button("exposed_card", () => {
        const args = { recipient: rec.value };
        if (which.value !== "") args.card = Number(which.value);
        return args;
      }, { class: "warn" }));
    }
    if (s === "croupier_reveal" && can("enter_cards")) {
      const unread = Object.keys(v.hands || {}).filter((k) => (v.hands[k] || []).includes(null));
      if (unread.length) {
        const rec = field("select", "enter-recipient", { "aria-label": "recipient" }, unread.map((k) => el("option", { value: k, text: k })));
        const cards = field("input", "enter-cards", { type: "text", placeholder: "As Td 4c", "aria-label": "cards", size: "10" });
        add(rec, cards, button("enter_cards", () => ({ recipient: rec.value, cards: cards.value })));
      }
    }
    if (s === "settlement" && can("confirm_result")) add(button("confirm_result", {}, { class: "primary" }));
    if ((s === "round_complete" || s === "round_void") && can("next_round")) add(button("next_round", {}, { class: "primary" }));
    // In malfunction only while the round is held there (a round the ruling already voided
    // has nothing left to void).
    if (can("void_round") && (["bets_open", "bets_closed", "dice_shaking", "dealing", "player_decisions", "croupier_reveal", "settlement", "shuffling"].includes(s)
        || (s === "malfunction" && r && !r.void))) {
      const reason = field("input", "void-reason", { type: "text", placeholder: "原因 reason", "aria-label": "reason" });
      add(reason, button("void_round", () => ({ reason: reason.value }), { class: "danger" }));
    }
    if (v.integrity_stop && can("clear_integrity")) {
      const who = field("input", "integrity-supervisor", { type: "text", placeholder: "主任 supervisor", "aria-label": "supervisor", size: "10" });
      add(who, button("clear_integrity", () => ({ supervisor: who.value }), { class: "danger" }));
    }
    // The red blinking light's buzzer; the light stays until the alarm is dealt with.
    // Not once silenced: the table would refuse it until another alarm sounds.
    if (d.light && d.light.signal === "malfunction" && d.light.buzzer !== "silenced" && can("silence_buzzer")) add(button("silence_buzzer"));
    // In malfunction, and in any state while a device reports a jam or malfunction (the table
    // clears only that condition there, and it would stop the next round).
    const toClear = supervisorConditions(d, v);
    if ((s === "malfunction" || toClear.length) && can("clear_malfunction")) {
      add(toClear.length ? el("span", { class: "muted", "data-testid": "to-clear", text: toClear.join(", ") }) : null,
        button("clear_malfunction", {}, { class: "primary" }));
    }
    if (can("switch_mode") && ["malfunction", "round_complete", "round_void", "out_of_service"].includes(s)) {
      const other = d.mode === "shoe" ? "shuffler" : "shoe";
      add(el("button", { type: "button", "data-command": "switch_mode", onclick: () => send("switch_mode", { mode: other }) }, bi("commands", "switch_mode"), " → ", bi("modes", other)));
    }
    // Also while the table waits for its deck or its bets, with none on the layout.
    const idle = s === "shuffling" || (s === "bets_open" && !((r && r.bets) || []).length && !((r && r.co_bankers) || []).length);
    if (can("close_table") && (["round_complete", "round_void", "malfunction"].includes(s) || idle)) add(button("close_table"));
  }

  // ---- the generic form: every command the role may give --------------------------------------
  function buildGenericForm() {
    const sel = $("command-name");
    put(sel);
    for (const c of commands) sel.append(el("option", { value: c.name, text: pair("commands", c.name).join(" ") + "  (" + c.name + ")" }));
    renderGenericParams();
  }
  function renderGenericParams() {
    const c = commands.find((x) => x.name === $("command-name").value);
    const box = $("command-params");
    put(box);
    if (!c) return;
    box.append(el("p", { class: "muted", text: c.help }));
    const props = (c.schema && c.schema.properties) || {};
    for (const p of c.params) {
      const s = props[p] || {};
      box.append(el("label", {}, p + " ", el("input", { name: p, "data-param": p, "data-read": isText(s) ? "text" : "json", title: s.description })));
    }
  }
  // A parameter the API's schema types as text (whoami gives each command's schema) goes as
  // typed, so a player called 8 or a reason of digits is not sent as a number and refused;
  // any other is read as JSON.
  function isText(schema) {
    const t = schema.type;
    return t === "string" || (Array.isArray(t) && t.includes("string") && t.every((x) => x === "string" || x === "null"));
  }
  function sendGenericCommand(e) {
    e.preventDefault();
    const args = {};
    for (const input of document.querySelectorAll("#command-params input")) {
      const raw = input.value.trim();
      if (!raw) continue;
      if (input.dataset.read === "text") { args[input.dataset.param] = raw; continue; }
      try { args[input.dataset.param] = JSON.parse(raw); } catch (err) { args[input.dataset.param] = raw; }
    }
    send($("command-name").value, args);
  }

  document.addEventListener("DOMContentLoaded", start);
})();
