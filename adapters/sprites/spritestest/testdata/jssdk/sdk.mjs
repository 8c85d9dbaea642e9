// Sprites' official JS SDK (@fly/sprites) against spritestest, operation
// by operation: "ok <step>" per step, "FAIL <step>: ..." at the first
// failure. Each step checks the answers a real Sprites API gives (the
// spec's appendices and the SDK's own parsing).
import { createHash } from 'node:crypto';
import net from 'node:net';
import { SpritesClient } from '@fly/sprites';

const client = new SpritesClient(process.env.SPRITES_TOKEN, { baseURL: process.env.SPRITES_URL });
const must = (cond, what) => { if (!cond) throw new Error(what); };
const eq = (got, want, what) => must(JSON.stringify(got) === JSON.stringify(want), `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
async function step(name, fn) {
  try {
    await fn();
    console.log(`ok ${name}`);
  } catch (err) {
    console.log(`FAIL ${name}: ${err?.stack || err}`);
    process.exit(1);
  }
}
async function drain(stream) {
  const msgs = [];
  await stream.processAll((m) => { msgs.push(m); });
  return msgs;
}

const name = 'sdk-box';
let sprite;

await step('create, get, list', async () => {
  sprite = await client.createSprite(name);
  eq(sprite.name, name, 'the created sprite');
  const got = await client.getSprite(name);
  eq(got.name, name, 'get');
  must(got.createdAt instanceof Date, 'a creation time');
  const page = await client.listSprites({ prefix: 'sdk-' });
  must(page.sprites.some((s) => s.name === name), 'listed by prefix');
  const all = await client.listAllSprites('sdk-');
  eq(all.map((s) => s.name), [name], 'all, by prefix');
  let missing;
  try { await client.getSprite('sdk-absent'); } catch (err) { missing = err; }
  must(missing, 'an unknown sprite is an error');
});

await step('update URL settings', async () => {
  await client.updateURLSettings(name, { auth: 'public' });
  const got = await client.getSprite(name);
  eq(got.urlSettings?.auth, 'public', 'the URL auth');
});

await step('exec, execFile', async () => {
  const r = await sprite.execFile('sh', ['-c', 'echo out; echo err >&2; id -un; pwd; exit 3']).catch((e) => e);
  eq(r.exitCode ?? r.code, 3, 'the exit code');
  eq(String(r.stdout), 'out\nsprite\n/home/sprite\n', 'stdout: the sprite user, in its home');
  eq(String(r.stderr), 'err\n', 'stderr');
  const ok = await sprite.execFile('pwd', [], { cwd: '/tmp' });
  eq(String(ok.stdout), '/tmp\n', 'a working directory is the sprite\'s');
  const env = await sprite.execFile('sh', ['-c', 'echo $GREETING'], { env: { GREETING: 'hi' } });
  eq(String(env.stdout), 'hi\n', 'the environment');
});

await step('spawn with stdin, 10 MB by SHA', async () => {
  const cmd = sprite.spawn('sh', ['-c', 'head -c 10000000 /dev/zero | tr "\\0" x; cat']);
  const hash = createHash('sha256');
  let n = 0;
  cmd.stdout.on('data', (b) => { hash.update(b); n += b.length; });
  await new Promise((resolve, reject) => { cmd.once('spawn', resolve); cmd.once('error', reject); });
  cmd.stdin.write('tail\n');
  cmd.stdin.end();
  const code = await cmd.wait();
  eq(code, 0, 'the exit code');
  const want = createHash('sha256').update('x'.repeat(10000000) + 'tail\n').digest('hex');
  eq(n, 10000005, 'every byte');
  eq(hash.digest('hex'), want, 'the SHA-256');
});

await step('sessions: create, list, attach', async () => {
  const s = sprite.createSession('sh', ['-c', 'echo started; sleep 30']);
  let first = '';
  await new Promise((resolve, reject) => {
    s.stdout.on('data', (b) => { first += b; if (first.includes('started')) resolve(); });
    s.on('error', reject);
  });
  const sessions = await sprite.listSessions();
  must(sessions.length >= 1, 'the session is listed');
  const id = sessions[0].id;
  const attached = sprite.attachSession(String(id));
  let replay = '';
  await new Promise((resolve, reject) => {
    attached.stdout.on('data', (b) => { replay += b; if (replay.includes('started')) resolve(); });
    attached.on('error', reject);
  });
  const ended = Promise.all([s.wait(), attached.wait()]);
  await drain(await sprite.killSession(String(id), 'SIGTERM', '2s'));
  await ended;
  must(!(await sprite.listSessions()).some((x) => String(x.id) === String(id)), 'killed: no longer listed');
});

await step('filesystem', async () => {
  const fs = sprite.filesystem('/home/sprite');
  await fs.mkdir('/home/sprite/d', { recursive: true });
  await fs.writeFile('/home/sprite/d/a.txt', 'alpha', { mode: 0o640 });
  eq(await fs.readFile('/home/sprite/d/a.txt', 'utf8'), 'alpha', 'read back');
  const st = await fs.stat('/home/sprite/d/a.txt');
  eq(st.size, 5, 'its size');
  must(st.isFile(), 'a file');
  eq(await fs.readdir('/home/sprite/d'), ['a.txt'], 'the listing');
  await fs.rename('/home/sprite/d/a.txt', '/home/sprite/d/b.txt');
  await fs.copyFile('/home/sprite/d/b.txt', '/home/sprite/d/c.txt');
  await fs.chmod('/home/sprite/d/c.txt', 0o600);
  eq((await fs.stat('/home/sprite/d/c.txt')).mode & 0o777, 0o600, 'chmod');
  must(await fs.exists('/home/sprite/d/b.txt'), 'exists');
  await fs.appendFile('/home/sprite/d/b.txt', ', beta');
  eq(await fs.readFile('/home/sprite/d/b.txt', 'utf8'), 'alpha, beta', 'appended');
  const seen = await sprite.execFile('cat', ['/home/sprite/d/c.txt']);
  eq(String(seen.stdout), 'alpha', 'a command sees the file at the same path');
  await fs.rm('/home/sprite/d', { recursive: true });
  must(!(await fs.exists('/home/sprite/d')), 'removed');
});

await step('checkpoints: create, list, get, restore', async () => {
  await sprite.filesystem().writeFile('/home/sprite/state', 'one');
  await drain(await sprite.createCheckpoint('sdk'));
  const cps = await sprite.listCheckpoints();
  const cp = cps.find((c) => c.comment === 'sdk');
  must(cp, 'listed with its comment');
  eq((await sprite.getCheckpoint(cp.id)).id, cp.id, 'get');
  await sprite.filesystem().writeFile('/home/sprite/state', 'two');
  await drain(await sprite.restoreCheckpoint(cp.id));
  let content;
  for (let i = 0; i < 100 && content === undefined; i++) {
    content = await sprite.filesystem().readFile('/home/sprite/state', 'utf8').catch(() => undefined);
    if (content === undefined) await new Promise((r) => setTimeout(r, 100));
  }
  eq(content, 'one', 'the checkpoint\'s content');
});

await step('network policy', async () => {
  const policy = { rules: [{ domain: 'example.com', action: 'allow' }] };
  await sprite.updateNetworkPolicy(policy);
  const got = await sprite.getNetworkPolicy();
  eq(got.rules.map((r) => [r.domain, r.action]), [['example.com', 'allow']], 'the policy kept');
});

await step('services', async () => {
  await drain(await sprite.createService('web', { cmd: 'sh', args: ['-c', 'trap "echo hup" HUP; echo up; while :; do sleep 1; done'] }, '1s'));
  const svc = await sprite.getService('web');
  eq(svc.name, 'web', 'get');
  must((await sprite.listServices()).some((s) => s.name === 'web'), 'listed');
  await drain(await sprite.stopService('web', '2s'));
  eq((await sprite.getService('web')).state?.status, 'stopped', 'stopped');
  await drain(await sprite.startService('web', '1s'));
  eq((await sprite.getService('web')).state?.status, 'running', 'started again');
  await sprite.signalService('web', 'HUP');
  await drain(await sprite.stopService('web', '2s'));
  await sprite.deleteService('web');
  let missing;
  try { await sprite.getService('web'); } catch (err) { missing = err; }
  must(missing, 'deleted');
});

await step('proxy a port', async () => {
  // The sprite's network is this machine's: a server here is one in the
  // sprite, reached through the proxy's tunnel.
  const server = net.createServer((c) => c.on('data', (b) => c.end('echo:' + b)));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const remotePort = server.address().port;
  const session = await sprite.proxyPort(0, remotePort, '127.0.0.1'); // 0: a free local port
  const local = session.server.address();
  try {
    const reply = await new Promise((resolve, reject) => {
      const c = net.connect(local.port, local.address, () => c.write('ping'));
      let got = '';
      c.on('data', (b) => { got += b; });
      c.on('end', () => resolve(got));
      c.on('error', reject);
    });
    eq(reply, 'echo:ping', 'the bytes each way');
  } finally {
    session.close();
    server.close();
  }
});

await step('upgrade', async () => {
  await sprite.upgrade();
});

await step('delete', async () => {
  await sprite.delete();
  let missing;
  try { await client.getSprite(name); } catch (err) { missing = err; }
  must(missing, 'gone');
});
