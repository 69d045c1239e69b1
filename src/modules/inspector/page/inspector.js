// Parley development inspector: plain browser JavaScript, no build step, nothing from the network
// but this server. It follows one conversation through the tracker_stream WebSocket and, on a
// socket.io channel, chats in it.
'use strict';

(function () {
  const config = JSON.parse(document.querySelector('meta[name="parley-inspector"]').content);
  const params = new URLSearchParams(location.search);
  const token = params.get('token');
  const base = location.pathname.replace(/\/inspect\.html$/, '');
  const $ = (id) => document.getElementById(id);
  const HIDDEN_SLOTS = ['dialogue_stack', 'flow_hashes'];

  let sender = null;
  let state = null;
  let stream = null;
  let flows = null;
  let sentAt = null;
  let exportTimer = null;
  const visited = new Map();

  $('channel').textContent = config.channel;

  function withToken(path) {
    if (!token) return path;
    return path + (path.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token);
  }

  async function request(path, init) {
    const res = await fetch(withToken(path), init);
    if (!res.ok) throw new Error(path.split('?')[0] + ': HTTP ' + res.status);
    return res;
  }

  function notice(text) {
    $('notice').textContent = text || '';
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function show(value) {
    return typeof value === 'string' ? value : JSON.stringify(value);
  }

  // --- tracker_stream --------------------------------------------------------------------------

  function connectStream() {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const query = token ? '?token=' + encodeURIComponent(token) : '';
    const ws = new WebSocket(scheme + '//' + location.host + base + '/tracker_stream' + query);
    stream = ws;
    ws.onopen = () => {
      $('stream-status').textContent = 'stream: open';
      retrieve();
    };
    ws.onmessage = (e) => {
      let s;
      try {
        s = JSON.parse(e.data);
      } catch {
        return;
      }
      if (s && s.sender_id === sender) render(s);
    };
    ws.onclose = () => {
      $('stream-status').textContent = 'stream: reconnecting';
      stream = null;
      setTimeout(connectStream, 1000);
    };
  }

  function retrieve() {
    if (stream && stream.readyState === WebSocket.OPEN && sender) {
      stream.send(JSON.stringify({ action: 'retrieve', sender_id: sender }));
    }
  }

  function setSender(id) {
    sender = id;
    state = null;
    visited.clear();
    $('sender').textContent = id || '—';
    for (const id of ['story-text', 'test-case-text']) $(id).textContent = '';
    $('events').replaceChildren();
    $('stack').replaceChildren();
    $('slots').tBodies[0].replaceChildren();
    renderFlow();
    retrieve();
  }

  // --- rendering -------------------------------------------------------------------------------

  function render(s) {
    state = s;
    renderSlots();
    renderStack();
    renderFlow();
    renderEvents();
    if (!config.chat) renderTranscript();
    const events = s.events || [];
    const last = events[events.length - 1];
    if (sentAt !== null && last && last.event === 'action' && last.name === 'action_listen') {
      latency();
    }
    scheduleExports();
  }

  function renderSlots() {
    const body = $('slots').tBodies[0];
    body.replaceChildren();
    for (const [name, value] of Object.entries(state.slots || {})) {
      if (value === null || HIDDEN_SLOTS.includes(name)) continue;
      const row = el('tr');
      row.dataset.slot = name;
      row.append(el('td', '', name), el('td', '', show(value)));
      body.append(row);
    }
  }

  function frames() {
    return Array.isArray(state && state.stack) ? state.stack : [];
  }

  function renderStack() {
    const list = $('stack');
    list.replaceChildren();
    const all = frames();
    if (all.length === 0) list.append(el('li', '', '(empty stack)'));
    for (const frame of all.slice().reverse()) {
      const parts = [frame.type, frame.flow_id, frame.step_id].filter(Boolean);
      list.append(el('li', '', parts.join(' · ')));
      if (frame.flow_id && frame.step_id) {
        if (!visited.has(frame.flow_id)) visited.set(frame.flow_id, new Set());
        visited.get(frame.flow_id).add(frame.step_id);
      }
    }
  }

  /** The frame to draw: the top frame, collect-information patterns aside (as Rasa's page). */
  function activeFrame() {
    const all = frames();
    for (let i = all.length - 1; i >= 0; i--) {
      const f = all[i];
      if (f.flow_id && f.type !== 'pattern_collect_information') return f;
    }
    return null;
  }

  function allSteps(steps, out) {
    for (const step of steps || []) {
      out.push(step);
      if (Array.isArray(step.next)) {
        for (const branch of step.next) {
          const target = 'then' in branch ? branch.then : branch.else;
          if (Array.isArray(target)) allSteps(target, out);
        }
      }
    }
    return out;
  }

  function firstId(target) {
    return Array.isArray(target) ? (target[0] ? target[0].id : 'END') : target;
  }

  function stepLabel(step) {
    if (step.collect !== undefined) {
      const value = state && state.slots ? state.slots[step.collect] : null;
      return (
        'collect ' +
        step.collect +
        (value === null || value === undefined ? ' (to ask)' : ' = ' + show(value))
      );
    }
    if (step.action !== undefined) return 'action ' + step.action;
    if (step.link !== undefined) return 'link ' + step.link;
    if (step.call !== undefined) return 'call ' + step.call;
    if (step.set_slots !== undefined) {
      return 'set ' + step.set_slots.map((s) => Object.keys(s).join(', ')).join(', ');
    }
    return 'noop';
  }

  function renderFlow() {
    const box = $('flow');
    box.replaceChildren();
    const frame = state ? activeFrame() : null;
    if (!frame) {
      $('flow-title').textContent = 'No active flow.';
      return;
    }
    const flow = (flows || []).find((f) => f.id === frame.flow_id);
    $('flow-title').textContent = 'Flow ' + frame.flow_id + ' — step ' + frame.step_id;
    if (!flow) return;
    const seen = visited.get(frame.flow_id) || new Set();
    const steps = allSteps(flow.steps, []);
    steps.forEach((step, i) => {
      const node = el('div', 'step');
      node.dataset.stepId = step.id;
      node.append(el('span', 'label', stepLabel(step)), el('span', 'id', step.id));
      if (step.id === frame.step_id) node.classList.add('active');
      else if (seen.has(step.id)) node.classList.add('visited');
      box.append(node);
      const edges = [];
      if (typeof step.next === 'string') edges.push('→ ' + step.next);
      else if (Array.isArray(step.next)) {
        for (const b of step.next) {
          edges.push(
            'then' in b ? 'if ' + b.if + ' → ' + firstId(b.then) : 'else → ' + firstId(b.else),
          );
        }
      } else edges.push('→ ' + (steps[i + 1] ? steps[i + 1].id : 'END'));
      box.append(el('div', 'edge', edges.join('\n')));
    });
    const end = el('div', 'step end', 'END');
    end.dataset.stepId = 'END';
    if (frame.step_id === 'END') end.classList.add('active');
    box.append(end);
    const active = box.querySelector('.active');
    if (active && active.scrollIntoView) active.scrollIntoView({ block: 'nearest' });
  }

  function renderEvents() {
    const list = $('events');
    list.replaceChildren();
    for (const e of state.events || []) {
      const item = el('li', '', JSON.stringify(e));
      item.dataset.event = e.event;
      list.append(item);
    }
  }

  /** Read-only transcript (channels without a chat here): user and bot events. */
  function renderTranscript() {
    const list = $('messages');
    list.replaceChildren();
    for (const e of state.events || []) {
      if (e.event === 'user') list.append(el('li', 'user', e.text || ''));
      else if (e.event === 'bot') list.append(el('li', 'bot', e.text || show(e.data || {})));
      else if (e.event === 'session_started') list.append(el('li', 'system', 'session started'));
    }
  }

  function scheduleExports() {
    clearTimeout(exportTimer);
    exportTimer = setTimeout(refreshExports, 150);
  }

  async function refreshExports() {
    const id = sender;
    if (!id) return;
    const path = '/conversations/' + encodeURIComponent(id);
    try {
      const [story, testCase] = await Promise.all([
        request(path + '/story').then((r) => r.text()),
        request(path + '/test_case').then((r) => r.text()),
      ]);
      if (id !== sender) return;
      $('story-text').textContent = story;
      $('test-case-text').textContent = testCase;
    } catch (error) {
      notice(String(error.message || error));
    }
  }

  function latency() {
    if (sentAt === null) return;
    $('latency').textContent = Math.round(performance.now() - sentAt) + ' ms';
    sentAt = null;
  }

  async function loadModel() {
    try {
      const status = await (await request('/status')).json();
      $('model-id').textContent = status.model_id || '—';
      flows = await (await request('/flows')).json();
      if (state) renderFlow();
    } catch (error) {
      notice(String(error.message || error));
    }
  }

  // --- chat (socket.io channels) ---------------------------------------------------------------

  function newSessionId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  function startChat(chat) {
    $('composer').hidden = false;
    const socket = io(location.origin + (chat.namespace || ''), {
      path: chat.path,
      transports: ['websocket'],
    });
    const askSession = (fresh) => {
      const id = chat.sessionPersistence ? (fresh || !sender ? newSessionId() : sender) : socket.id;
      socket.emit('session_request', { session_id: id });
    };
    socket.on('connect', () => askSession(false));
    socket.on('session_confirm', (confirmed) => {
      const id = chat.sessionPersistence ? String(confirmed) : socket.id;
      if (id !== sender) {
        $('messages').replaceChildren();
        setSender(id);
      }
    });
    socket.on(chat.botMessageEvt, (message) => {
      latency();
      addBot(message || {});
    });
    socket.on('message_error', (body) =>
      notice(body && body.message ? body.message : 'message failed'),
    );
    socket.on('session_error', (body) =>
      notice(body && body.message ? body.message : 'session refused'),
    );

    const send = (text, shown) => {
      if (!sender || !text) return;
      notice('');
      $('messages').append(el('li', 'user', shown || text));
      sentAt = performance.now();
      socket.emit(chat.userMessageEvt, { message: text, session_id: sender });
    };
    $('composer').addEventListener('submit', (e) => {
      e.preventDefault();
      const input = $('message');
      send(input.value.trim());
      input.value = '';
    });

    function addBot(message) {
      const item = el('li', 'bot');
      if (message.text) item.append(el('span', 'text', message.text));
      const attachment = message.attachment;
      if (attachment && attachment.payload && attachment.payload.src) {
        item.append(el('span', 'text', '[' + attachment.type + '] ' + attachment.payload.src));
      }
      if (!message.text && !attachment) item.append(el('span', 'text', JSON.stringify(message)));
      const buttons = message.quick_replies || message.buttons || [];
      if (buttons.length > 0) {
        const row = el('div', 'buttons');
        for (const b of buttons) {
          const button = el('button', 'reply', b.title);
          button.type = 'button';
          button.addEventListener('click', () => send(b.payload, b.title));
          row.append(button);
        }
        item.append(row);
      }
      $('messages').append(item);
      item.scrollIntoView({ block: 'nearest' });
    }

    return {
      newConversation() {
        if (chat.sessionPersistence) askSession(true);
        else {
          socket.disconnect();
          socket.connect();
        }
      },
    };
  }

  // --- start -----------------------------------------------------------------------------------

  let chat = null;
  if (config.chat) {
    chat = startChat(config.chat);
  } else {
    $('sender-form').hidden = false;
    const given = params.get('sender');
    $('sender-input').value = given || '';
    if (given) setSender(given);
    $('sender-form').addEventListener('submit', (e) => {
      e.preventDefault();
      const id = $('sender-input').value.trim();
      const url = new URL(location.href);
      url.searchParams.set('sender', id);
      history.replaceState(null, '', url);
      $('messages').replaceChildren();
      setSender(id || null);
    });
  }

  $('restart').addEventListener('click', async () => {
    if (!sender) return;
    try {
      await request('/conversations/' + encodeURIComponent(sender) + '/tracker/events', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'restart' }),
      });
      if (config.chat) $('messages').replaceChildren(el('li', 'system', 'conversation restarted'));
    } catch (error) {
      notice(String(error.message || error));
    }
  });

  $('new-conversation').addEventListener('click', () => {
    if (chat) chat.newConversation();
    else {
      $('sender-input').value = '';
      $('sender-input').focus();
    }
  });

  for (const tab of document.querySelectorAll('[role="tab"]')) {
    tab.addEventListener('click', () => {
      for (const other of document.querySelectorAll('[role="tab"]')) {
        const selected = other === tab;
        other.setAttribute('aria-selected', String(selected));
        $('panel-' + other.dataset.tab).hidden = !selected;
      }
    });
  }

  for (const button of document.querySelectorAll('.copy')) {
    button.addEventListener('click', async () => {
      const text = $(button.dataset.copy).textContent;
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = 'Copied';
      } catch {
        const range = document.createRange();
        range.selectNodeContents($(button.dataset.copy));
        const selection = getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        button.textContent = 'Selected: press Ctrl+C';
      }
      setTimeout(() => (button.textContent = 'Copy'), 1500);
    });
  }

  void loadModel();
  connectStream();
})();
