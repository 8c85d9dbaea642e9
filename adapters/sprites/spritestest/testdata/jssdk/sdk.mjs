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
  const restored = await drain(await sprite.restoreCheckpoint(cp.id));
  eq(restored.at(-1)?.type, 'complete', 'the restore\'s stream ends complete');
  // Its end is the restore done: the files are the checkpoint's.
  eq(await sprite.filesystem().readFile('/home/sprite/state', 'utf8'), 'one', 'the checkpoint\'s content');
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
  const logs = await drain(await sprite.getServiceLogs('web', { lines: 10 }));
  must(logs.some((e) => e.type === 'stdout' && e.data === 'up\n'), `the kept output: ${JSON.stringify(logs)}`);
  const done = logs.at(-1);
  eq(done.type, 'complete', 'the logs end');
  eq(done.logFiles, { output: '/.sprite/logs/services/web.log' }, 'the log file named');
  must((await sprite.filesystem().readFile(done.logFiles.output, 'utf8')).includes('up'), 'the log file holds the output');
  const restart = (await drain(await sprite.restartService('web', '1s'))).map((e) => e.type);
  for (const kind of ['stopping', 'stopped', 'started', 'stdout', 'complete']) must(restart.includes(kind), `restart streams ${kind}: ${restart}`);
  must(restart.indexOf('stopped') < restart.indexOf('started'), `stopped before started: ${restart}`);
  eq((await sprite.getService('web')).state?.status, 'running', 'running again');
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

await step('restart, check', async () => {
  await sprite.filesystem().writeFile('/home/sprite/kept', 'kept');
  const s = sprite.spawn('sh', ['-c', 'echo up; sleep 60']);
  let seen = '';
  await new Promise((resolve, reject) => {
    s.stdout.on('data', (b) => { seen += b; if (seen.includes('up')) resolve(); });
    s.on('error', reject);
  });
  const ended = s.wait().catch(() => undefined);
  const r = await sprite.restart();
  eq(r.spriteName, name, 'the restarted sprite');
  must(/^[0-9a-f]{14}$/.test(r.machineId), `a machine id: ${r.machineId}`);
  must(r.message, 'a message');
  await ended;
  eq(await sprite.listSessions(), [], 'the restart ended every session');
  eq(await sprite.filesystem().readFile('/home/sprite/kept', 'utf8'), 'kept', 'the files stay');
  const c = await sprite.check();
  eq([c.spriteName, c.status], [name, 'healthy'], 'the check');
  must(c.checkedAt instanceof Date && !Number.isNaN(c.checkedAt.getTime()), 'a check time');
  let missing;
  try { await client.checkSprite('sdk-absent'); } catch (err) { missing = err; }
  must(missing, 'an unknown sprite cannot be checked');
});

await step('watch sprites', async () => {
  const stream = await client.watchSprites({ prefix: 'sdk-' });
  const first = await stream.next();
  eq(first.name, name, 'the sprites as they are first');
  must(['cold', 'warm', 'running'].includes(first.status), `a status: ${first.status}`);
  must(typeof first.organization.running === 'number' && first.organization.name, 'the organisation\'s counts');
  const until = async (what, pred) => {
    for (let ev = await stream.next(); ev; ev = await stream.next()) if (pred(ev)) return ev;
    throw new Error(`the watch ended before ${what}`);
  };
  const other = await client.createSprite('sdk-other');
  await until('the new sprite', (ev) => ev.name === 'sdk-other' && ev.status !== 'destroyed');
  await other.delete();
  await until('its end', (ev) => ev.name === 'sdk-other' && ev.status === 'destroyed');
  stream.close();
});

await step('execFileHTTP', async () => {
  // Sprites' SDK frames by HTTP chunk and its fetch joins chunks read
  // late (its README says so of the service): commands whose only frame
  // is the exit, their effects read back.
  const r = await sprite.execFileHTTP('sh', ['-c', 'cat > /home/sprite/http-in; pwd > /home/sprite/http-pwd'], { input: 'hello', cwd: '/tmp' });
  eq(r.exitCode, 0, 'the exit code');
  eq(await sprite.filesystem().readFile('/home/sprite/http-in', 'utf8'), 'hello', 'stdin from the body');
  eq(await sprite.filesystem().readFile('/home/sprite/http-pwd', 'utf8'), '/tmp\n', 'the working directory');
  let failed;
  try { await sprite.execFileHTTP('sh', ['-c', 'exit 4']); } catch (err) { failed = err; }
  eq(failed?.exitCode, 4, 'a failed command\'s exit code');
});

await step('watch ports', async () => {
  const probe = net.createServer();
  await new Promise((r) => probe.listen(0, '127.0.0.1', r));
  const port = probe.address().port;
  await new Promise((r) => probe.close(r));
  const watcher = await sprite.watchPorts();
  const list = await watcher.next();
  eq(list.type, 'port_list', 'the first event');
  must(!list.ports.some((p) => p.port === port), 'not listened on yet');
  await drain(await sprite.createService('listener', { cmd: 'node', args: ['-e', `require('net').createServer().listen(${port}, '127.0.0.1'); setInterval(() => {}, 1000)`] }, '0s'));
  const pid = (await sprite.getService('listener')).state?.pid;
  let ev;
  do { ev = await watcher.next(); } while (ev && !(ev.type === 'port_opened' && ev.port === port));
  must(ev, 'the port opened');
  eq([ev.address, ev.pid], ['127.0.0.1', pid], 'its address and process');
  await drain(await sprite.stopService('listener', '2s'));
  do { ev = await watcher.next(); } while (ev && !(ev.type === 'port_closed' && ev.port === port));
  must(ev, 'the port closed');
  watcher.close();
  await sprite.deleteService('listener');
});

await step('filesystem: watch, chown', async () => {
  const fs = sprite.filesystem('/home/sprite');
  await fs.mkdir('/home/sprite/w', { recursive: true });
  const watcher = await fs.watch('w');
  const sub = await watcher.next();
  eq([sub.type, sub.paths], ['subscribed', ['/home/sprite/w']], 'subscribed, by the sprite\'s path');
  const until = async (what, pred) => {
    for (let ev = await watcher.next(); ev; ev = await watcher.next()) if (pred(ev)) return ev;
    throw new Error(`the watch ended before ${what}`);
  };
  await fs.writeFile('/home/sprite/w/f.txt', 'abc');
  await until('the create', (ev) => ev.type === 'event' && ev.path === '/home/sprite/w/f.txt' && ev.event === 'create');
  await sprite.execFile('sh', ['-c', 'echo more >> /home/sprite/w/f.txt']);
  const write = await until('the write', (ev) => ev.type === 'event' && ev.path === '/home/sprite/w/f.txt' && ev.event === 'write');
  must(write.isDir === false && typeof write.size === 'number', 'size and kind');
  await fs.rm('/home/sprite/w/f.txt');
  await until('the removal', (ev) => ev.path === '/home/sprite/w/f.txt' && ev.event === 'remove');
  watcher.close();
  let bad;
  try { const w2 = await fs.watch('/home/sprite/absent'); bad = await w2.next(); w2.close(); } catch (err) { bad = err; }
  must(bad?.type === 'error' || bad instanceof Error, 'an absent path cannot be watched');

  await fs.writeFile('/home/sprite/owned', 'x');
  await fs.chown('/home/sprite/owned', { uid: 'root', gid: 0 });
  const owner = String((await sprite.execFile('stat', ['-c', '%u:%g', '/home/sprite/owned'])).stdout);
  eq(owner, process.env.SPRITES_SERVER_ROOT === '1' ? '0:0\n' : owner, 'the owner');
  let refused;
  try { await fs.chown('/home/sprite/owned', { uid: 'nobody-here' }); } catch (err) { refused = err; }
  eq(refused?.code, 'EINVAL', 'an unknown user');
});

await step('privileges and resources policies', async () => {
  eq(await sprite.getPrivilegesPolicy(), {}, 'no privileges policy at first');
  const privileges = { profile: 'minimal', devices: ['/dev/fuse'], noNewPrivileges: true };
  await sprite.updatePrivilegesPolicy(privileges);
  eq(await sprite.getPrivilegesPolicy(), privileges, 'kept');
  let bad;
  try { await sprite.updatePrivilegesPolicy({ profile: 'root' }); } catch (err) { bad = err; }
  must(bad, 'an unknown profile refused');
  await sprite.deletePrivilegesPolicy();
  eq(await sprite.getPrivilegesPolicy(), {}, 'deleted');
  eq(await sprite.getResourcesPolicy(), { memory: undefined }, 'no resources policy at first');
  await sprite.updateResourcesPolicy({ memory: { limitMB: 2048, autoscale: true } });
  eq((await sprite.getResourcesPolicy()).memory, { limitMB: 2048, autoscale: true }, 'kept');
  await sprite.deleteResourcesPolicy();
  eq(await sprite.getResourcesPolicy(), { memory: undefined }, 'deleted');
});

await step('control mode', async () => {
  const pooled = new SpritesClient(process.env.SPRITES_TOKEN, { baseURL: process.env.SPRITES_URL, controlMode: true }).sprite(name);
  // An operation on a control connection, as the SDK's pool runs it.
  const conn = await pooled.getControlConnection();
  const op = await conn.startOp('exec', { cmd: ['sh', '-c', 'cat; echo err >&2; exit 7'], stdin: true });
  let out = '';
  let err = '';
  op.on('stdout', (b) => { out += b; });
  op.on('stderr', (b) => { err += b; });
  op.write(Buffer.from('piped\n'));
  op.sendEOF();
  eq(await op.wait(), 7, 'op.complete carries the exit code');
  eq([out, err], ['piped\n', 'err\n'], 'the frames as on the exec socket');
  const second = await conn.startOp('exec', { cmd: ['sleep', '5'] });
  const refused = await new Promise((resolve) => {
    second.on('error', resolve);
    second.wait().then(() => resolve(undefined));
    // A start while one runs: the server refuses it (op.error).
    conn.sendControl({ type: 'op.start', op: 'exec', args: { cmd: ['true'] } });
  });
  must(refused && /in progress/.test(refused.message), `one operation at a time: ${refused}`);
  pooled.closeControlConnection();
  // execFile in control mode takes a pooled connection.
  const viaPool = new SpritesClient(process.env.SPRITES_TOKEN, { baseURL: process.env.SPRITES_URL, controlMode: true }).sprite(name);
  const results = await Promise.all([1, 2, 3].map((i) => viaPool.execFile('sh', ['-c', `echo ${i}; pwd`], { cwd: '/tmp' })));
  eq(results.map((r) => String(r.stdout)), ['1\n/tmp\n', '2\n/tmp\n', '3\n/tmp\n'], 'each command\'s own output');
  must(viaPool.hasControlConnection(), 'over control connections');
  viaPool.closeControlConnection();
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
