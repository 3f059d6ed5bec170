// Serves the browser app (index.html, app.js) on its own origin, apart from the API's:
//   node examples/browser-app/serve.mjs [--port 4000]
// then open the address it prints. Only these two files are served; nothing else of the disk.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';

const files = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
};
const at = process.argv.indexOf('--port');
const port = at > 0 ? Number(process.argv[at + 1]) : 4000;
const server = createServer(async (request, response) => {
  const file = files[new URL(request.url ?? '/', 'http://localhost').pathname];
  if (file === undefined) return response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
  response.writeHead(200, { 'content-type': file[1], 'cache-control': 'no-store' }).end(await readFile(new URL(file[0], import.meta.url)));
});
server.listen(port, '127.0.0.1', () => {
  console.log(`The browser app is at http://127.0.0.1:${server.address().port}/ (its API: ?api=http://127.0.0.1:3000 by default)`);
});
