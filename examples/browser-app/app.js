// The browser app of docs/accounts.md#browser-apps: sign-up, sign-in, a note, refresh, sign-out.
// The access token lives in this module's memory only; the refresh token in sessionStorage (this
// tab only, gone when it closes, kept over a reload), never in localStorage or a cookie.
const $ = (id) => document.getElementById(id);
$('api').value = new URLSearchParams(location.search).get('api') ?? 'http://127.0.0.1:3000';
let accessToken;
let timer;

/** One request; throws with the problem's status, code and detail when it is not a 2xx. */
async function send(method, path, body, token) {
  const headers = { ...(body && { 'Content-Type': 'application/json' }), ...(token && { Authorization: `Bearer ${token}` }) };
  const res = await fetch(new URL(path, $('api').value), { method, headers, body: body && JSON.stringify(body) });
  const data = res.status === 204 ? null : await res.json();
  if (!res.ok) throw Object.assign(new Error(`${res.status} ${data?.code}: ${data?.detail}`), { status: res.status });
  return data;
}
/** A call as the signed-in user; on a 401 (the access token expired) it refreshes once and tries again. */
async function call(method, path, body) {
  try {
    return await send(method, path, body, accessToken);
  } catch (error) {
    if (error.status !== 401 || !sessionStorage.getItem('refreshToken')) throw error;
    await refresh();
    return send(method, path, body, accessToken);
  }
}
function keep(session) {
  accessToken = session.accessToken;
  sessionStorage.setItem('refreshToken', session.refreshToken);
  clearTimeout(timer); // refresh a minute before the access token expires
  timer = setTimeout(() => run('refresh', refresh), (session.expiresIn - 60) * 1000);
  return session;
}
const refresh = async () => keep(await send('POST', '/v1/auth/refresh', { refreshToken: sessionStorage.getItem('refreshToken') })) && 'new access and refresh tokens';
const credentials = () => ({ email: $('email').value, password: $('password').value });
const steps = {
  'sign-up': async () => `account ${(await send('POST', '/v1/auth/sign-up', credentials())).user.id} made`,
  'sign-in': async () => `signed in as ${keep(await send('POST', '/v1/auth/sign-in', credentials())).user.email}`,
  'add note': async () => `note ${(await call('POST', '/notes', { text: $('text').value })).id} created`,
  'list notes': async () => `notes: ${(await call('GET', '/notes')).map((note) => note.text).join(', ') || 'none'}`,
  refresh,
  'sign out': async () => {
    await send('POST', '/v1/auth/sign-out', { refreshToken: sessionStorage.getItem('refreshToken') });
    accessToken = undefined;
    clearTimeout(timer);
    sessionStorage.removeItem('refreshToken');
    return 'signed out';
  },
};
async function run(name, step) {
  const said = await step().then((done) => `✓ ${name}: ${done}`, (error) => `✗ ${name}: ${error.message}`);
  $('log').appendChild(document.createElement('li')).textContent = said;
}
for (const button of document.querySelectorAll('[data-step]')) button.onclick = () => run(button.dataset.step, steps[button.dataset.step]);
// After a reload the access token is gone: the refresh token in sessionStorage resumes the session.
if (sessionStorage.getItem('refreshToken')) run('resume', refresh);
