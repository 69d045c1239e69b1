#!/usr/bin/env node
'use strict';

/**
 * The banking example's action server: plain Node, no dependencies. It speaks the protocol of
 * Rasa's action servers (rasa-sdk): the assistant POSTs `{next_action, sender_id, tracker,
 * domain, version}` to /webhook and gets `{events, responses}` back; an unknown action gets a
 * 404 with `{error, action_name}`.
 *
 *   node examples/banking/actions/server.js [port]     (default 5055, or $PORT)
 *
 * Every account holds the same made-up balance, BANKING_BALANCE euros (default 500).
 */

const { Buffer } = require('node:buffer');
const http = require('node:http');

const BALANCE = Number(process.env.BANKING_BALANCE ?? 500);

/** A `slot` event as the assistant applies it. */
function slot(name, value) {
  return { event: 'slot', timestamp: null, name, value };
}

/** The account balance of a user (one balance for everyone in this example). */
function balanceOf(_senderId) {
  return BALANCE;
}

/** The custom actions, by name: each takes the request body and returns `{events, responses}`. */
const ACTIONS = {
  /** Sets `has_sufficient_funds`: whether the balance covers the `amount` slot. */
  action_check_funds(call) {
    const amount = Number(call.tracker.slots.amount);
    const enough = Number.isFinite(amount) && amount <= balanceOf(call.sender_id);
    return { events: [slot('has_sufficient_funds', enough)], responses: [] };
  },

  /** Sets `balance` to the account balance, formatted for display ("500.00 euros"). */
  action_fetch_balance(call) {
    const text = `${balanceOf(call.sender_id).toFixed(2)} euros`;
    return { events: [slot('balance', text)], responses: [] };
  },
};

function send(res, status, body) {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

function handle(req, res) {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && path === '/health') {
    send(res, 200, { status: 'ok' });
    return;
  }
  if (req.method === 'GET' && path === '/actions') {
    send(
      res,
      200,
      Object.keys(ACTIONS).map((name) => ({ name })),
    );
    return;
  }
  if (req.method !== 'POST' || path !== '/webhook') {
    send(res, 404, { error: `no route ${req.method} ${path}` });
    return;
  }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let call;
    try {
      call = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      send(res, 400, { error: 'the request body is not JSON' });
      return;
    }
    const name = call && call.next_action;
    const action = Object.prototype.hasOwnProperty.call(ACTIONS, name) ? ACTIONS[name] : null;
    if (!action) {
      send(res, 404, {
        error: `No registered action found for name '${name}'.`,
        action_name: name,
      });
      return;
    }
    try {
      send(res, 200, action({ ...call, tracker: call.tracker ?? { slots: {} } }));
    } catch (error) {
      send(res, 500, { error: String(error && error.message ? error.message : error) });
    }
  });
}

function start(port) {
  const server = http.createServer(handle);
  server.listen(port, () => {
    const address = server.address();
    const actual = typeof address === 'object' && address ? address.port : port;
    console.log(`banking action server listening on port ${actual}`);
  });
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return server;
}

if (require.main === module) {
  const port = Number(process.argv[2] ?? process.env.PORT ?? 5055);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`not a port number: ${process.argv[2]}`);
    process.exit(2);
  }
  start(port);
}

module.exports = { ACTIONS, start };
