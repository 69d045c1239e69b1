'use strict';
// Child process for the HTTP benchmarks: the bare Nest GET /ping app, port reported over IPC.
const { serveBare, serveOverIpc } = require('./http-bench');

serveBare()
  .then(serveOverIpc)
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
