// Parley conversation review: plain browser JavaScript, no build step, nothing from the network
// but this server and its identity provider. Signs in with the OpenID Connect client-credentials
// grant (the token stays in this script's memory only) and reads, tags and deletes
// conversations through the GraphQL API at /api/graphql.
'use strict';

(function () {
  const config = JSON.parse(document.querySelector('meta[name="parley-review"]').content);
  const $ = (id) => document.getElementById(id);
  const GRAPHQL = '/api/graphql';
  /** Events of one transcript asked for at most (the API bounds each answer). */
  const TRANSCRIPT_EVENTS = 500;
  /** Bookkeeping slots of flows, left out of the transcript (as in the inspector). */
  const INTERNAL_SLOTS = ['dialogue_stack', 'flow_hashes'];
  /** Events other than messages that the transcript shows without "all events". */
  const LANDMARK_EVENTS = ['session_started', 'restart', 'flow_started', 'flow_completed'];

  const LIST = `query List($input: RawConversationsInput!) {
  rawConversations(input: $input) {
    count
    conversations { id eventCount conversationEvents tags { id name } }
  }
}`;
  const ONE = `query One($input: RawConversationsInput!) {
  rawConversations(input: $input) {
    conversations { id eventCount conversationEvents tags { id name } }
  }
}`;
  const TAGS = `query Tags($assistantId: ID!) { conversationTags(assistantId: $assistantId) { id name } }`;
  const CREATE_TAG = `mutation CreateTag($input: CreateConversationTagInput!) {
  createConversationTag(input: $input) { id name }
}`;
  const ADD_TAG = `mutation AddTag($input: AddConversationTagToConversationInput!) {
  addConversationTagToConversation(input: $input)
}`;
  const REMOVE_TAG = `mutation RemoveTag($input: RemoveConversationTagFromConversationInput!) {
  removeConversationTagFromConversation(input: $input)
}`;
  const DELETE = `mutation Delete($input: DeleteConversationsInput!) { deleteConversations(input: $input) }`;

  /** The session: only in this closure, never in storage, cookies or the URL. */
  let session = null; // { token, clientId }
  /** The filter of the list shown, and its page. */
  let query = null; // { assistantId, fromTime, toTime, tagIds, limit }
  let offset = 0;
  let rows = []; // conversations of the page shown, in order, with their offsets
  let selected = null; // { id, offset }
  let knownTags = [];
  let shown = null; // the conversation shown, to draw again when "all events" changes

  /** An error with the GraphQL error code (extensions.code) when there is one. */
  class ApiError extends Error {
    constructor(code, message) {
      super(message);
      this.code = code;
    }
  }

  // ---- sign-in -------------------------------------------------------------------------------

  $('issuer').textContent = config.issuer || 'none configured';
  if (!config.issuer) {
    showSignInError(
      'This server has no identity provider configured (OIDC_ISSUER_URL), so the conversation API cannot be used.',
    );
    $('sign-in-button').disabled = true;
  }

  function showSignInError(text) {
    $('sign-in-error').textContent = text;
    $('sign-in-error').hidden = false;
  }

  /** The token endpoint of the issuer, from its discovery document. */
  async function tokenEndpoint() {
    const issuer = config.issuer.replace(/\/+$/, '');
    let res;
    try {
      res = await fetch(issuer + '/.well-known/openid-configuration', { credentials: 'omit' });
    } catch {
      throw new Error('Could not reach the identity provider at ' + issuer + '.');
    }
    if (!res.ok) {
      throw new Error('The identity provider answered ' + res.status + ' to discovery.');
    }
    const discovery = await res.json();
    const endpoint = discovery.token_endpoint;
    if (typeof endpoint !== 'string' || new URL(endpoint).origin !== new URL(issuer).origin) {
      throw new Error("The identity provider's token endpoint is not on the issuer's origin.");
    }
    return endpoint;
  }

  async function fetchToken(clientId, clientSecret) {
    const endpoint = await tokenEndpoint();
    let res;
    try {
      res = await fetch(endpoint, {
        method: 'POST',
        credentials: 'omit',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: clientSecret,
        }).toString(),
      });
    } catch {
      throw new Error(
        "The token request was refused by the browser: is this page's origin (" +
          location.origin +
          ") among the client's web origins at the identity provider?",
      );
    }
    const body = await res.json().catch(() => ({}));
    if (!res.ok || typeof body.access_token !== 'string') {
      const reason = [body.error || 'HTTP ' + res.status, body.error_description]
        .filter(Boolean)
        .join(': ');
      if (body.error === 'invalid_client' || res.status === 401) {
        throw new Error('Sign-in failed: wrong client id or secret (' + reason + ').');
      }
      throw new Error('Sign-in failed: ' + reason + '.');
    }
    return body.access_token;
  }

  $('sign-in-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('sign-in-error').hidden = true;
    $('sign-in-button').disabled = true;
    const clientId = $('client-id').value.trim();
    try {
      const token = await fetchToken(clientId, $('client-secret').value);
      session = { token, clientId };
      $('client-secret').value = '';
      $('who-client').textContent = clientId;
      $('who').hidden = false;
      $('sign-out').hidden = false;
      $('sign-in').hidden = true;
      $('review').hidden = false;
      if (!$('assistant').value) $('assistant').value = config.assistantId || '';
      if ($('assistant').value) await applyFilters();
    } catch (error) {
      showSignInError(error.message);
    } finally {
      $('sign-in-button').disabled = !config.issuer;
    }
  });

  function signOut(message) {
    session = null;
    query = null;
    rows = [];
    knownTags = [];
    closeConversation();
    // Nothing read with the token stays on the page.
    $('conversations').tBodies[0].replaceChildren();
    $('tag-filter').replaceChildren();
    $('known-tags').replaceChildren();
    $('list-info').textContent = '';
    $('page-info').textContent = '';
    $('error').hidden = true;
    $('who').hidden = true;
    $('sign-out').hidden = true;
    $('review').hidden = true;
    $('sign-in').hidden = false;
    $('sign-in-error').hidden = true;
    if (message) showSignInError(message);
    $('client-secret').focus();
  }

  $('sign-out').addEventListener('click', () => signOut(null));

  // ---- GraphQL -------------------------------------------------------------------------------

  async function gql(document, variables) {
    if (session === null) throw new ApiError('UNAUTHENTICATED', 'Not signed in.');
    const res = await fetch(GRAPHQL, {
      method: 'POST',
      credentials: 'omit',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + session.token },
      body: JSON.stringify({ query: document, variables }),
    });
    const body = await res.json().catch(() => null);
    const first = body && Array.isArray(body.errors) ? body.errors[0] : null;
    if (first) {
      const code = (first.extensions && first.extensions.code) || 'ERROR';
      if (code === 'UNAUTHENTICATED') {
        signOut('Signed out: ' + first.message + ' Sign in again.');
      }
      throw new ApiError(code, first.message);
    }
    if (!res.ok || !body || !body.data) throw new ApiError('HTTP_' + res.status, res.statusText);
    return body.data;
  }

  function showError(error) {
    if (session === null) return; // signed out: the sign-in form says why
    $('error').textContent =
      error instanceof ApiError ? error.code + ': ' + error.message : String(error.message);
    $('error').hidden = false;
  }

  function clearError() {
    $('error').hidden = true;
  }

  // ---- the list ------------------------------------------------------------------------------

  /** `datetime-local` (read as UTC) → ISO 8601 UTC with milliseconds, or null. */
  function isoUtc(value) {
    if (!value) return null;
    const withSeconds = value.length === 16 ? value + ':00' : value;
    const date = new Date(withSeconds + 'Z');
    return Number.isNaN(date.getTime()) ? value : date.toISOString();
  }

  function timeOf(seconds) {
    return typeof seconds === 'number'
      ? new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 19)
      : '—';
  }

  function tagChip(tag) {
    const span = document.createElement('span');
    span.className = 'tag';
    span.textContent = tag.name;
    return span;
  }

  async function loadTags() {
    const data = await gql(TAGS, { assistantId: query.assistantId });
    knownTags = data.conversationTags;
    const chosen = new Set(query.tagIds);
    $('tag-filter').replaceChildren(
      ...knownTags.map((t) => {
        const option = document.createElement('option');
        option.value = t.id;
        option.textContent = t.name;
        option.selected = chosen.has(t.id);
        return option;
      }),
    );
    $('known-tags').replaceChildren(
      ...knownTags.map((t) => {
        const option = document.createElement('option');
        option.value = t.name;
        return option;
      }),
    );
  }

  async function applyFilters() {
    query = {
      assistantId: $('assistant').value.trim(),
      fromTime: isoUtc($('from').value),
      toTime: isoUtc($('to').value),
      tagIds: [...$('tag-filter').selectedOptions].map((o) => o.value),
      limit: Number($('limit').value),
    };
    offset = 0;
    clearError();
    try {
      await loadTags();
    } catch (error) {
      showError(error);
      return;
    }
    await loadPage();
  }

  function listInput(extra) {
    const input = { assistantId: query.assistantId, limit: query.limit, offset };
    if (query.fromTime) input.fromTime = query.fromTime;
    if (query.toTime) input.toTime = query.toTime;
    // Parley's extension: conversations carrying every one of these tags.
    if (query.tagIds.length > 0) input.tagIds = query.tagIds;
    return Object.assign(input, extra);
  }

  async function loadPage() {
    let data;
    try {
      // The first event of each conversation only: its start time.
      data = await gql(LIST, { input: listInput({ eventLimit: 1 }) });
    } catch (error) {
      showError(error);
      return;
    }
    clearError();
    const { count, conversations } = data.rawConversations;
    rows = conversations.map((c, i) => ({ ...c, offset: offset + i }));
    const body = $('conversations').tBodies[0];
    body.replaceChildren(...rows.map(rowOf));
    const last = offset + conversations.length;
    $('page-info').textContent =
      count === 0 ? 'no conversations' : offset + 1 + '–' + last + ' of ' + count;
    $('list-info').textContent = '';
    $('prev').disabled = offset === 0;
    $('next').disabled = last >= count;
    if (selected !== null && !rows.some((r) => r.id === selected.id)) closeConversation();
  }

  function rowOf(c) {
    const tr = document.createElement('tr');
    tr.tabIndex = 0;
    tr.dataset.id = c.id;
    if (selected !== null && selected.id === c.id) tr.classList.add('selected');
    const id = document.createElement('td');
    id.className = 'mono';
    id.textContent = c.id;
    const started = document.createElement('td');
    started.textContent = timeOf(c.conversationEvents[0] && c.conversationEvents[0].timestamp);
    const events = document.createElement('td');
    events.textContent = String(c.eventCount);
    const tags = document.createElement('td');
    tags.append(...c.tags.map(tagChip));
    tr.append(id, started, events, tags);
    const open = () => void openConversation(c.id, c.offset);
    tr.addEventListener('click', open);
    tr.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') open();
    });
    return tr;
  }

  $('filters').addEventListener('submit', (e) => {
    e.preventDefault();
    void applyFilters();
  });
  $('prev').addEventListener('click', () => {
    offset = Math.max(0, offset - query.limit);
    void loadPage();
  });
  $('next').addEventListener('click', () => {
    offset += query.limit;
    void loadPage();
  });

  // ---- one conversation ----------------------------------------------------------------------

  /**
   * The API reads conversations by filter, not by id: the conversation is read again at its
   * offset in the list's filter, and checked to be the one asked for.
   */
  async function readConversation(id, at) {
    const data = await gql(ONE, {
      input: listInput({ offset: at, limit: 1, eventLimit: TRANSCRIPT_EVENTS }),
    });
    const found = data.rawConversations.conversations[0];
    if (!found || found.id !== id) {
      throw new ApiError(
        'LIST_CHANGED',
        'The list has changed since it was read; showing it again.',
      );
    }
    return found;
  }

  async function openConversation(id, at) {
    let conversation;
    try {
      conversation = await readConversation(id, at);
    } catch (error) {
      showError(error);
      if (error.code === 'LIST_CHANGED') await loadPage();
      return;
    }
    clearError();
    selected = { id, offset: at };
    for (const tr of $('conversations').tBodies[0].rows) {
      tr.classList.toggle('selected', tr.dataset.id === id);
    }
    showConversation(conversation);
  }

  function closeConversation() {
    selected = null;
    shown = null;
    $('conversation').hidden = true;
    $('conversation-tags').replaceChildren();
    $('transcript').replaceChildren();
  }

  function showConversation(c) {
    shown = c;
    $('conversation').hidden = false;
    $('conversation-id').textContent = c.id;
    $('delete-confirm').hidden = true;
    $('delete').hidden = false;
    $('conversation-tags').replaceChildren(
      ...c.tags.map((tag) => {
        const li = document.createElement('li');
        li.className = 'tag';
        li.dataset.tagId = tag.id;
        li.textContent = tag.name;
        const remove = document.createElement('button');
        remove.type = 'button';
        remove.className = 'remove-tag';
        remove.textContent = '×';
        remove.setAttribute('aria-label', 'Remove tag ' + tag.name);
        remove.addEventListener('click', () => void removeTag(tag.id));
        li.append(remove);
        return li;
      }),
    );
    $('transcript-info').textContent =
      c.conversationEvents.length < c.eventCount
        ? 'First ' + c.conversationEvents.length + ' of ' + c.eventCount + ' events.'
        : c.eventCount + ' events.';
    $('transcript').replaceChildren(...c.conversationEvents.flatMap(transcriptItem));
  }

  /** A transcript line of an event: user and bot messages, and the other events in brief. */
  function transcriptItem(event) {
    const li = document.createElement('li');
    li.dataset.event = String(event.event);
    const when = document.createElement('span');
    when.className = 'when';
    when.textContent = timeOf(event.timestamp);
    if (event.event === 'user') {
      li.className = 'user';
      const intent = event.parse_data && event.parse_data.intent && event.parse_data.intent.name;
      li.textContent = event.text == null ? '' : String(event.text);
      when.textContent += intent ? ' · ' + intent : '';
    } else if (event.event === 'bot') {
      li.className = 'bot';
      li.textContent = event.text == null ? '' : String(event.text);
      const utter = event.metadata && event.metadata.utter_action;
      when.textContent += utter ? ' · ' + utter : '';
    } else {
      if (!$('all-events').checked && !LANDMARK_EVENTS.includes(event.event)) return [];
      if (event.event === 'action' && event.name === 'action_listen') return [];
      if (event.event === 'slot' && INTERNAL_SLOTS.includes(event.name)) return [];
      li.className = 'event';
      li.textContent = summary(event);
    }
    li.append(when);
    return [li];
  }

  function brief(text) {
    const t = String(text);
    return t.length > 80 ? t.slice(0, 79) + '…' : t;
  }

  function summary(event) {
    switch (event.event) {
      case 'action':
        return 'action ' + event.name;
      case 'slot':
        return 'slot ' + event.name + ' = ' + brief(JSON.stringify(event.value));
      case 'flow_started':
      case 'flow_completed':
        return event.event.replace('_', ' ') + ' ' + event.flow_id;
      case 'active_loop':
        return 'active loop ' + (event.name || 'none');
      default:
        return String(event.event);
    }
  }

  async function refreshSelected() {
    if (selected === null) return;
    const { id } = selected;
    await loadTags();
    await loadPage();
    const row = rows.find((r) => r.id === id);
    if (row) await openConversation(id, row.offset);
    else closeConversation(); // it no longer passes the filter
  }

  $('all-events').addEventListener('change', () => {
    if (shown !== null) {
      $('transcript').replaceChildren(...shown.conversationEvents.flatMap(transcriptItem));
    }
  });

  $('add-tag-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    if (selected === null) return;
    const name = $('new-tag').value.trim();
    if (!name) return;
    try {
      // Parley's tag extension: the assistant's tag of that name, created when missing.
      const tag = (await gql(CREATE_TAG, { input: { assistantId: query.assistantId, name } }))
        .createConversationTag;
      await gql(ADD_TAG, { input: { conversationId: selected.id, tagId: tag.id } });
      $('new-tag').value = '';
      await refreshSelected();
    } catch (error) {
      showError(error);
    }
  });

  async function removeTag(tagId) {
    if (selected === null) return;
    try {
      await gql(REMOVE_TAG, { input: { conversationId: selected.id, tagId } });
      await refreshSelected();
    } catch (error) {
      showError(error);
    }
  }

  $('delete').addEventListener('click', () => {
    $('delete').hidden = true;
    $('delete-confirm').hidden = false;
  });
  $('delete-no').addEventListener('click', () => {
    $('delete-confirm').hidden = true;
    $('delete').hidden = false;
  });
  $('delete-yes').addEventListener('click', async () => {
    if (selected === null) return;
    try {
      const deleted = (await gql(DELETE, { input: { conversationIds: [selected.id] } }))
        .deleteConversations;
      closeConversation();
      await loadPage();
      $('list-info').textContent =
        deleted === 1 ? 'Conversation deleted.' : 'The conversation was already gone.';
    } catch (error) {
      showError(error);
    }
  });
})();
