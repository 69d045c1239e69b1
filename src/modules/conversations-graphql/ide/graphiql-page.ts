/** Path of the IDE's own files, under the GraphQL endpoint. */
export const IDE_ASSET_PREFIX = '/api/graphql/ide/';

/** The GraphiQL page: a bearer-token field above GraphiQL; all files served by Parley. */
export function graphiqlPage(endpoint: string): string {
  const a = (file: string): string => `${IDE_ASSET_PREFIX}${file}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Parley GraphQL</title>
<link rel="stylesheet" href="${a('graphiql.min.css')}">
<style>
  html, body { height: 100%; margin: 0; font-family: system-ui, sans-serif; }
  body { display: flex; flex-direction: column; }
  #auth { display: flex; gap: 8px; align-items: center; padding: 6px 12px; border-bottom: 1px solid #ddd; }
  #auth input { flex: 1; font-family: monospace; }
  #graphiql { flex: 1; min-height: 0; }
</style>
</head>
<body>
<form id="auth" autocomplete="off" onsubmit="return false">
  <label for="token">Bearer token</label>
  <input id="token" name="token" type="password" placeholder="paste an access_token from the identity provider">
  <button id="apply" type="submit">Use token</button>
</form>
<div id="graphiql" data-endpoint="${endpoint}"></div>
<script src="${a('react.production.min.js')}"></script>
<script src="${a('react-dom.production.min.js')}"></script>
<script src="${a('graphiql.min.js')}"></script>
<script src="${a('ide.js')}"></script>
</body>
</html>
`;
}

/**
 * Script of the page: POSTs every operation as JSON with `Authorization: Bearer <token>`, and
 * mounts GraphiQL again when a token is applied, so the schema is fetched with it. `?query=`
 * and `?variables=` prefill the editors (for links and tests).
 */
export const IDE_SCRIPT = `(function () {
  var root = document.getElementById('graphiql');
  var endpoint = root.getAttribute('data-endpoint');
  var input = document.getElementById('token');
  var params = new URLSearchParams(window.location.search);
  input.value = sessionStorage.getItem('parley:token') || '';
  function fetcher(graphQLParams) {
    var headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
    var token = input.value.trim();
    if (token) headers.Authorization = 'Bearer ' + token;
    return fetch(endpoint, { method: 'POST', headers: headers, body: JSON.stringify(graphQLParams) })
      .then(function (response) { return response.json(); });
  }
  var reactRoot = ReactDOM.createRoot(root);
  var generation = 0;
  function mount() {
    generation += 1;
    reactRoot.render(React.createElement(GraphiQL, {
      key: generation,
      fetcher: fetcher,
      defaultEditorToolsVisibility: true,
      query: params.get('query') || undefined,
      variables: params.get('variables') || undefined,
    }));
  }
  document.getElementById('auth').addEventListener('submit', function () {
    sessionStorage.setItem('parley:token', input.value.trim());
    mount();
  });
  mount();
})();
`;
