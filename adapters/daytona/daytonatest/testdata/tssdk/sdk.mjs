// Drives Daytona's official TypeScript SDK against daytonatest:
// DAYTONA_API_URL points at it, DAYTONA_API_KEY is its key, polling mode
// (no socket.io). Each step prints "ok <step>"; the first failure prints
// "FAIL <step>: <error>" and exits 1.
import { Daytona } from '@daytonaio/sdk'
import { createHash } from 'node:crypto'
import http from 'node:http'

const steps = []
const step = (name, fn) => steps.push([name, fn])
const expect = (cond, what) => { if (!cond) throw new Error(what) }
const daytona = new Daytona({ useDeprecatedPolling: true })
let sbx

step('create', async () => {
  sbx = await daytona.create({ name: 'ts', labels: { paddock: '1' } })
  expect(sbx.state === 'started', 'state ' + sbx.state)
})
step('intervals and activity', async () => {
  await sbx.setAutostopInterval(30)
  await sbx.setAutoArchiveInterval(0)
  await sbx.setAutoDeleteInterval(-1)
  await sbx.refreshActivity()
  await sbx.refreshData()
  expect(sbx.autoStopInterval === 30 && sbx.autoArchiveInterval === 43200 && sbx.autoDeleteInterval === -1,
    'intervals ' + JSON.stringify([sbx.autoStopInterval, sbx.autoArchiveInterval, sbx.autoDeleteInterval]))
  // A container (the default class) cannot be paused; nothing here has a
  // recoverable error.
  const paused = await sbx.pause().then(() => null, (e) => e)
  expect(paused && paused.statusCode === 422, 'pause refused: ' + (paused && paused.statusCode))
  const recovered = await sbx.recover().then(() => null, (e) => e)
  expect(recovered && recovered.statusCode === 400, 'recover refused: ' + (recovered && recovered.statusCode))
})
step('execute', async () => {
  const r = await sbx.process.executeCommand('echo hello; echo oops >&2; exit 3')
  expect(r.exitCode === 3, 'exit ' + JSON.stringify(r))
  expect(r.result.includes('hello') && r.result.includes('oops'), 'result ' + JSON.stringify(r.result))
})
step('codeRun', async () => {
  // The sandbox's language is python by default; codeRun is the daemon's
  // code-run route.
  const r = await sbx.process.codeRun('import sys\nprint("py", sys.argv[1:])\nsys.exit(2)', { argv: ['x'] })
  expect(r.exitCode === 2 && r.result === "py ['x']\n" && r.artifacts.charts.length === 0, 'codeRun ' + JSON.stringify(r))
})
step('user, home and paths', async () => {
  // Commands run as daytona in its home, and see the sandbox's paths.
  const r = await sbx.process.executeCommand('echo $(id -un) $HOME $(pwd)')
  expect(r.result === 'daytona /home/daytona /home/daytona\n', 'who and where ' + JSON.stringify(r.result))
  const inTmp = await sbx.process.executeCommand('pwd', '/tmp')
  expect(inTmp.result === '/tmp\n', 'cwd ' + JSON.stringify(inTmp.result))
  await sbx.fs.uploadFile(Buffer.from('here'), '/home/daytona/where/abs.txt')
  const abs = await sbx.process.executeCommand('cat /home/daytona/where/abs.txt && stat -c %U:%a /home/daytona/where/abs.txt')
  expect(abs.result === 'here' + 'daytona:644\n', 'a file by its absolute path ' + JSON.stringify(abs.result))
  // The daemon runs as daytona: where daytona may not write, an upload is
  // refused (a validation error), and nothing is made.
  const refused = await sbx.fs.uploadFile(Buffer.from('no'), '/opt/denied/x.txt').then(() => null, (e) => e)
  expect(refused && /permission denied/.test(String(refused.message)), 'refused: ' + (refused && refused.message))
  const none = await sbx.process.executeCommand('ls /opt/denied 2>&1; echo $?')
  expect(none.result.trim().endsWith('2'), 'nothing made ' + JSON.stringify(none.result))
})
step('session', async () => {
  await sbx.process.createSession('s1')
  const cmd = await sbx.process.executeSessionCommand('s1', { command: 'echo out; echo err >&2; sleep 0.2; echo done', runAsync: true })
  expect(cmd.cmdId, 'cmdId ' + JSON.stringify(cmd))
  let out = '', err = ''
  await sbx.process.getSessionCommandLogs('s1', cmd.cmdId, (s) => { out += s }, (s) => { err += s })
  expect(out === 'out\ndone\n', 'stdout ' + JSON.stringify(out))
  expect(err === 'err\n', 'stderr ' + JSON.stringify(err))
  const c = await sbx.process.getSessionCommand('s1', cmd.cmdId)
  expect(c.exitCode === 0, 'exit ' + JSON.stringify(c))
  const logs = await sbx.process.getSessionCommandLogs('s1', cmd.cmdId)
  expect(logs.stdout === 'out\ndone\n' && logs.stderr === 'err\n', 'logs ' + JSON.stringify(logs))
  const sync = await sbx.process.executeSessionCommand('s1', { command: 'echo sync; echo serr >&2; (exit 4)' })
  expect(sync.exitCode === 4, 'sync ' + JSON.stringify(sync))
  expect(sync.stdout === 'sync\n' && sync.stderr === 'serr\n', 'sync output apart ' + JSON.stringify(sync))
  // A session is one shell: its directory and exports carry over.
  await sbx.process.executeSessionCommand('s1', { command: 'cd /tmp && export CARRIED=yes' })
  const carried = await sbx.process.executeSessionCommand('s1', { command: 'echo $(pwd) $CARRIED' })
  expect(carried.stdout === '/tmp yes\n', 'the shell carries over ' + JSON.stringify(carried))
  const sessions = await sbx.process.listSessions()
  expect(sessions.some((s) => s.sessionId === 's1'), 'sessions ' + JSON.stringify(sessions))
  await sbx.process.deleteSession('s1')
})
step('10 MB followed through the log callbacks', async () => {
  await sbx.process.createSession('big')
  const cmd = await sbx.process.executeSessionCommand('big', { command: 'seq 1 1450000; echo tail >&2', runAsync: true })
  const out = createHash('sha256'), err = []
  let n = 0
  await sbx.process.getSessionCommandLogs('big', cmd.cmdId, (s) => { out.update(s); n += Buffer.byteLength(s) }, (s) => err.push(s))
  const want = createHash('sha256')
  let size = 0
  for (let i = 1; i <= 1450000; i++) { const line = i + '\n'; want.update(line); size += line.length }
  expect(n === size, 'stdout bytes ' + n + ' of ' + size)
  expect(out.digest('hex') === want.digest('hex'), 'stdout by SHA-256')
  expect(err.join('') === 'tail\n', 'stderr ' + JSON.stringify(err.join('')))
  await sbx.process.deleteSession('big')
})
step('files', async () => {
  await sbx.fs.uploadFile(Buffer.from('from ts'), '/tmp/ts/hello.txt')
  const back = await sbx.fs.downloadFile('/tmp/ts/hello.txt')
  expect(back.toString() === 'from ts', 'read back ' + back.toString())
  const r = await sbx.process.executeCommand('cat /tmp/ts/hello.txt')
  expect(r.result === 'from ts', 'a process sees it ' + JSON.stringify(r))
})
step('home, work dir, entrypoint', async () => {
  expect((await sbx.getUserHomeDir()) === '/home/daytona', 'home')
  expect((await sbx.getWorkDir()) === '/home/daytona', 'work dir')
  const ep = await sbx.process.getEntrypointSession()
  expect(ep.sessionId === 'entrypoint' && ep.commands.length === 1 && ep.commands[0].id === 'entrypoint_command', 'entrypoint ' + JSON.stringify(ep))
  const logs = await sbx.process.getEntrypointLogs()
  expect(logs.output === '' && logs.stdout === '' && logs.stderr === '', 'entrypoint logs ' + JSON.stringify(logs))
})
step('find, search and replace', async () => {
  await sbx.fs.uploadFile(Buffer.from('one TODO\ntwo\nthree TODO\n'), 'proj/src/a.ts')
  await sbx.fs.uploadFile(Buffer.from('nothing here\n'), 'proj/src/deep/b.ts')
  await sbx.fs.uploadFile(Buffer.from('TODO in text\n'), 'proj/notes.txt')
  const found = await sbx.fs.findFiles('proj', 'TODO')
  const rows = found.map((m) => `${m.file}:${m.line}:${m.content}`).sort()
  expect(JSON.stringify(rows) === JSON.stringify(['proj/notes.txt:1:TODO in text', 'proj/src/a.ts:1:one TODO', 'proj/src/a.ts:3:three TODO']), 'found ' + JSON.stringify(rows))
  const ts = await sbx.fs.searchFiles('/home/daytona/proj', '**/*.ts')
  expect(JSON.stringify(ts.files.sort()) === JSON.stringify(['/home/daytona/proj/src/a.ts', '/home/daytona/proj/src/deep/b.ts']), 'searched ' + JSON.stringify(ts))
  const top = await sbx.fs.searchFiles('proj', '*.txt')
  expect(JSON.stringify(top.files) === JSON.stringify(['proj/notes.txt']), 'one level ' + JSON.stringify(top))
  const replaced = await sbx.fs.replaceInFiles(['proj/src/a.ts', 'proj/missing.ts'], 'TODO', 'DONE')
  expect(replaced[0].success === true && replaced[1].success === false, 'replaced ' + JSON.stringify(replaced))
  const r = await sbx.process.executeCommand('cat proj/src/a.ts')
  expect(r.result === 'one DONE\ntwo\nthree DONE\n', 'replaced in place ' + JSON.stringify(r.result))
})
step('PTY sessions', async () => {
  // This daemon version serves create, connect, resize and kill; the SDK's
  // newer createPty (over create-connect) is not one of them and fails, as
  // against the real daemon. The SDK describes, lists, resizes and kills a
  // session made with the create route.
  const created = await sbx.process.createPty({ id: 'sdk-pty', onData: () => {} }).then(() => null, (e) => e)
  expect(created, 'createPty over create-connect fails, as on this daemon version')
  const { basePath, baseOptions } = sbx.process.clientConfig
  const made = await fetch(basePath + '/process/pty', { method: 'POST', headers: { ...baseOptions.headers, 'Content-Type': 'application/json' },
    body: JSON.stringify({ id: 'raw-pty', cols: 100, rows: 30 }) })
  expect(made.status === 201, 'created ' + made.status)
  const info = await sbx.process.getPtySessionInfo('raw-pty')
  expect(info.active === true && info.cols === 100 && info.rows === 30 && info.cwd === '/home/daytona', 'info ' + JSON.stringify(info))
  const listed = await sbx.process.listPtySessions()
  expect(listed.some((p) => p.id === 'raw-pty'), 'listed ' + JSON.stringify(listed))
  const resized = await sbx.process.resizePtySession('raw-pty', 90, 20)
  expect(resized.cols === 90 && resized.rows === 20, 'resized ' + JSON.stringify(resized))
  await sbx.process.killPtySession('raw-pty')
  const gone = await sbx.process.getPtySessionInfo('raw-pty').then(() => null, (e) => e)
  expect(gone, 'killed and forgotten')
})
step('git', async () => {
  // The daemon's git routes, on a repository in the sandbox: clone, status,
  // add, commit, push, pull, branches; and the answers of routes this
  // daemon version does not have (init), and of a directory that is no
  // repository.
  const seed = await sbx.process.executeCommand('git init -q -b main seed && cd seed && git -c user.name=s -c user.email=s@example.com commit -q --allow-empty -m init && git clone -q --bare . ../origin.git')
  expect(seed.exitCode === 0, 'seed ' + JSON.stringify(seed))
  await sbx.git.clone('/home/daytona/origin.git', 'repo', 'main')
  await sbx.fs.uploadFile(Buffer.from('hi'), 'repo/a.txt')
  let st = await sbx.git.status('repo')
  expect(st.currentBranch === 'main' && st.branchPublished === true && JSON.stringify(st.fileStatus) ===
    JSON.stringify([{ name: 'a.txt', extra: '', staging: 'Untracked', worktree: 'Untracked' }]), 'status ' + JSON.stringify(st))
  await sbx.git.add('repo', ['a.txt'])
  const { sha } = await sbx.git.commit('repo', 'add a', 'Ada', 'ada@example.com')
  expect(/^[0-9a-f]{40}$/.test(sha), 'sha ' + sha)
  st = await sbx.git.status('repo')
  expect(st.ahead === 1 && st.fileStatus.length === 0, 'ahead ' + JSON.stringify(st))
  await sbx.git.push('repo')
  await sbx.git.pull('repo')
  st = await sbx.git.status('repo')
  expect(st.ahead === 0 && st.behind === 0, 'pushed ' + JSON.stringify(st))
  const pushed = await sbx.process.executeCommand('git -C origin.git log -1 --format=%H')
  expect(pushed.result.trim() === sha, 'the origin has it ' + JSON.stringify(pushed))
  await sbx.git.createBranch('repo', 'feature')
  let branches = await sbx.git.branches('repo')
  expect(JSON.stringify(branches.branches) === '["feature","main"]', 'branches ' + JSON.stringify(branches))
  await sbx.git.checkoutBranch('repo', 'main')
  await sbx.git.deleteBranch('repo', 'feature')
  branches = await sbx.git.branches('repo')
  expect(JSON.stringify(branches.branches) === '["main"]', 'deleted ' + JSON.stringify(branches))
  const init = await sbx.git.init('fresh').then(() => null, (e) => e)
  expect(init && init.statusCode === 404, 'init is not this version\'s: ' + (init && init.statusCode))
  const none = await sbx.git.status('/tmp').then(() => null, (e) => e)
  expect(none && none.statusCode === 404 && /repository does not exist/.test(none.message), 'no repository: ' + (none && none.message))
})
// viaServer sends a GET for url to the server's own address with url's
// host: the proxy domain's names do not resolve here.
const viaServer = (url, headers = {}) => new Promise((resolve, reject) => {
  const u = new URL(url)
  const api = new URL(process.env.DAYTONA_API_URL)
  const req = http.request({ host: api.hostname, port: api.port, path: u.pathname + u.search, headers: { ...headers, host: u.host } }, (res) => {
    let body = ''
    res.on('data', (d) => { body += d })
    res.on('end', () => resolve({ status: res.statusCode, body }))
  })
  req.on('error', reject)
  req.end()
})
step('snapshots', async () => {
  const made = await daytona.snapshot.create({ name: 'sdk-image', image: 'python:3.12-slim' })
  expect(made.state === 'active' && made.name === 'sdk-image', 'from an image: ' + JSON.stringify(made))
  const got = await daytona.snapshot.get('sdk-image')
  expect(got.id === made.id, 'get by name')
  const badTag = await daytona.snapshot.create({ name: 'bad', image: 'ubuntu:latest' }).catch((e) => e)
  expect(badTag && badTag.statusCode === 400 && /latest/.test(badTag.message), 'a :latest image: ' + badTag)
  await sbx.fs.uploadFile(Buffer.from('kept'), '/home/daytona/kept.txt')
  await sbx.createSnapshot('sdk-from-sandbox')
  expect(sbx.state === 'started', 'back to started: ' + sbx.state)
  const listed = await daytona.snapshot.list(1, 100)
  const names = listed.items.map((x) => x.name)
  expect(names.includes('sdk-image') && names.includes('sdk-from-sandbox') && listed.total === listed.items.length, 'listed: ' + JSON.stringify(names))
  const copy = await daytona.create({ snapshot: 'sdk-from-sandbox' })
  try {
    const r = await copy.process.executeCommand('cat /home/daytona/kept.txt')
    expect(r.result === 'kept', 'a sandbox from the snapshot has its files: ' + JSON.stringify(r.result))
  } finally {
    await copy.delete()
  }
  const active = await daytona.snapshot.activate('sdk-image').catch((e) => e)
  expect(active && active.statusCode === 400 && /already active/.test(active.message), 'already active: ' + active)
  await daytona.snapshot.delete('sdk-image')
  const gone = await daytona.snapshot.get('sdk-image').catch((e) => e)
  expect(gone && gone.statusCode === 404, 'deleted: ' + (gone && gone.statusCode))
})
step('volumes', async () => {
  const vol = await daytona.volume.get('sdk-volume', true)
  expect(vol.name === 'sdk-volume' && vol.state === 'pending_create', 'made on get: ' + JSON.stringify(vol))
  const again = await daytona.volume.get('sdk-volume')
  expect(again.id === vol.id && again.state === 'ready', 'ready: ' + JSON.stringify(again))
  const writer = await daytona.create({ volumes: [{ volumeId: vol.id, mountPath: '/home/daytona/vol' }] })
  const reader = await daytona.create({ volumes: [{ volumeId: 'sdk-volume', mountPath: '/mnt/vol' }] })
  try {
    expect(writer.volumes.length === 1 && writer.volumes[0].volumeId === vol.id, 'mounted: ' + JSON.stringify(writer.volumes))
    if (process.env.DAYTONA_MAPPED === 'true') {
      await writer.process.executeCommand('echo shared > /home/daytona/vol/note')
      const r = await reader.process.executeCommand('cat /mnt/vol/note')
      expect(r.result.trim() === 'shared', 'shared between sandboxes: ' + JSON.stringify(r.result))
    }
    const busy = await daytona.volume.delete(again).catch((e) => e)
    expect(busy && busy.statusCode === 409, 'in use: ' + (busy && busy.statusCode))
  } finally {
    await writer.delete()
    await reader.delete()
  }
  await daytona.volume.delete(again)
  expect(!(await daytona.volume.list()).some((v) => v.id === vol.id), 'deleted')
})
step('code interpreter', async () => {
  const seen = []
  const first = await sbx.codeInterpreter.runCode('x = 40\nprint("hi")', { onStdout: (m) => seen.push(m.output) })
  expect(first.stdout === 'hi\n' && seen.join('') === 'hi\n' && !first.error, 'first: ' + JSON.stringify(first))
  const kept = await sbx.codeInterpreter.runCode('print(x + 2)')
  expect(kept.stdout === '42\n', 'globals kept: ' + JSON.stringify(kept))
  const failed = await sbx.codeInterpreter.runCode('1/0')
  expect(failed.error && failed.error.name === 'ZeroDivisionError' && /line 1/.test(failed.error.traceback), 'an error: ' + JSON.stringify(failed.error))
  const ctx = await sbx.codeInterpreter.createContext('/tmp')
  const inCtx = await sbx.codeInterpreter.runCode('import os; print(os.getcwd(), "x" in globals())', { context: ctx })
  expect(inCtx.stdout === '/tmp False\n', 'its own context: ' + JSON.stringify(inCtx.stdout))
  expect((await sbx.codeInterpreter.listContexts()).some((c) => c.id === ctx.id), 'listed')
  await sbx.codeInterpreter.deleteContext(ctx)
  const slow = await sbx.codeInterpreter.runCode('import time; time.sleep(600)', { timeout: 1 }).catch((e) => e)
  // The worker's "interrupted" control ends the run before the 4008 close.
  expect(!(slow instanceof Error) && slow.stdout === '' && !slow.error, 'interrupted: ' + slow)
})
step('language server, computer use', async () => {
  // The daemon runs typescript-language-server from the sandbox's PATH.
  await sbx.fs.uploadFile(Buffer.from("export class Greeter { hello() { return 1 } }\nconst g = new Greeter()\ng.\n"), '/home/daytona/lsp/index.ts')
  const lsp = await sbx.createLspServer('typescript', '/home/daytona/lsp')
  await lsp.start()
  await lsp.didOpen('/home/daytona/lsp/index.ts')
  const symbols = await lsp.documentSymbols('/home/daytona/lsp/index.ts')
  expect(symbols.some((s) => s.name === 'Greeter' && s.kind === 5 && s.location.uri === 'file:///home/daytona/lsp/index.ts'), 'symbols: ' + JSON.stringify(symbols))
  const found = await lsp.sandboxSymbols('Greet')
  expect(found.some((s) => s.name === 'Greeter'), 'workspace: ' + JSON.stringify(found))
  const completions = await lsp.completions('/home/daytona/lsp/index.ts', { line: 2, character: 2 })
  expect(completions.items.some((i) => i.label === 'hello'), 'completions: ' + JSON.stringify(completions))
  // The daemon's validator takes line 0 for no position.
  const atZero = await lsp.completions('/home/daytona/lsp/index.ts', { line: 0, character: 1 }).catch((e) => e)
  expect(atZero && atZero.statusCode === 400, 'line 0: ' + atZero)
  await lsp.didClose('/home/daytona/lsp/index.ts')
  await lsp.stop()
  const again = await lsp.stop().catch((e) => e)
  expect(again && again.statusCode === 500, 'stopped twice: ' + again)

  // No desktop: the plugin's 503; recordings are the daemon's own.
  const status = await sbx.computerUse.getStatus().catch((e) => e)
  expect(status && status.statusCode === 503 && /Computer-use functionality is not available/.test(status.message), 'status: ' + status)
  const click = await sbx.computerUse.mouse.click(1, 1).catch((e) => e)
  expect(click && click.statusCode === 503, 'click: ' + click)
  expect((await sbx.computerUse.recording.list()).recordings.length === 0, 'no recordings')
  await sbx.fs.uploadFile(Buffer.from('mp4'), '/home/daytona/.daytona/recordings/7d3f4c1e-55a1-4d0e-8e47-2f6a3b1c9d00_demo_20261204_101010.mp4')
  const rec = await sbx.computerUse.recording.get('7d3f4c1e-55a1-4d0e-8e47-2f6a3b1c9d00')
  expect(rec.status === 'completed' && rec.sizeBytes === 3, 'recording: ' + JSON.stringify(rec))
  await sbx.computerUse.recording.delete(rec.id)
  const gone = await sbx.computerUse.recording.get(rec.id).catch((e) => e)
  expect(gone && gone.statusCode === 404, 'deleted: ' + gone)
})
step('routes newer than the daemon', async () => {
  // The control plane and daemon followed here are v0.190.0, which have
  // no metrics, environment, secrets or signing-key routes: their 404.
  for (const [name, call] of [
    ['getMetrics', () => sbx.getMetrics()],
    ['getMetricsLatest', () => sbx.getMetricsLatest()],
    ['updateEnv', () => sbx.updateEnv({ A: '1' })],
    ['updateSecrets', () => sbx.updateSecrets({ A: 'a' })],
    ['downloadUrl', () => sbx.downloadUrl('/home/daytona/x')],
    ['uploadUrl', () => sbx.uploadUrl('/home/daytona/x')],
    ['rotateSigningKey', () => sbx.rotateSigningKey()],
  ]) {
    const e = await call().then(() => null, (e) => e)
    expect(e && e.statusCode === 404, name + ': ' + e)
  }
})
step('fork', async () => {
  const refused = await sbx.fork({ name: 'copy' }).catch((e) => e)
  expect(refused && refused.statusCode === 422 && /Forking is not supported/.test(refused.message), 'a container does not fork: ' + refused)
  const viaClient = await daytona.fork(sbx).catch((e) => e)
  expect(viaClient && viaClient.statusCode === 422, 'nor through the client: ' + (viaClient && viaClient.statusCode))
})
step('resize, SSH access, previews', async () => {
  await sbx.resize({ cpu: 2, memory: 2 })
  expect(sbx.cpu === 2 && sbx.memory === 2 && sbx.state === 'started', 'resized: ' + sbx.cpu + ' ' + sbx.memory + ' ' + sbx.state)
  const tooBig = await sbx.resize({ cpu: 8 }).catch((e) => e)
  expect(tooBig && tooBig.statusCode === 400 && /exceeds maximum allowed per sandbox \(4\)/.test(tooBig.message), 'over the limit: ' + tooBig)
  const ssh = await sbx.createSshAccess(5)
  expect(/^[A-Za-z0-9]{32}$/.test(ssh.token) && ssh.sshCommand === `ssh -p 2222 ${ssh.token}@localhost`, 'ssh: ' + JSON.stringify(ssh))
  const denied = await sbx.validateSshAccess(ssh.token).catch((e) => e)
  expect(denied && denied.statusCode === 403, 'validation is the gateway\'s: ' + (denied && denied.statusCode))
  await sbx.revokeSshAccess(ssh.token)

  const app = http.createServer((req, res) => res.end('app ' + req.url))
  await new Promise((resolve) => app.listen(0, '127.0.0.1', resolve))
  try {
    const port = app.address().port
    const link = await sbx.getPreviewLink(port)
    expect(link.url.startsWith(`http://${port}-${sbx.id}.proxy.localhost:`) && link.token, 'link: ' + JSON.stringify(link))
    const open = await viaServer(link.url + '/x', { 'X-Daytona-Preview-Token': link.token })
    expect(open.status === 200 && open.body === 'app /x', 'with the token: ' + JSON.stringify(open))
    const shut = await viaServer(link.url + '/x')
    expect(shut.status === 307, 'without: ' + shut.status)
    const signed = await sbx.getSignedPreviewUrl(port, 60)
    expect(signed.port === port && /^[a-z0-9]{16}$/.test(signed.token), 'signed: ' + JSON.stringify(signed))
    const bySigned = await viaServer(signed.url + '/y')
    expect(bySigned.status === 200 && bySigned.body === 'app /y', 'signed: ' + JSON.stringify(bySigned))
    await sbx.expireSignedPreviewUrl(port, signed.token)
    expect((await viaServer(signed.url + '/y')).status === 307, 'expired')
  } finally {
    app.close()
  }
})
step('stop, start, delete', async () => {
  await sbx.stop()
  expect(sbx.state === 'stopped', 'stopped ' + sbx.state)
  await sbx.start()
  expect(sbx.state === 'started', 'started ' + sbx.state)
  await sbx.delete()
})

for (const [name, fn] of steps) {
  try {
    await fn()
    console.log('ok ' + name)
  } catch (e) {
    console.log('FAIL ' + name + ': ' + (e && e.stack ? e.stack : e))
    process.exit(1)
  }
}
