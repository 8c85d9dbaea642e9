// Drives E2B's official JS SDK against e2btest: E2B_API_URL and
// E2B_SANDBOX_URL point at it, E2B_API_KEY is its key. Each step prints
// "ok <step>"; the first failure prints "FAIL <step>: <error>" and exits 1.
import { Sandbox, Secret, SecretError, Template, TemplateError, Volume, VolumeError, VolumeNotFoundError, VolumePathNotFoundError } from 'e2b'

const steps = []
const step = (name, fn) => steps.push([name, fn])
const expect = (cond, what) => { if (!cond) throw new Error(what) }
let sbx

step('create', async () => {
  sbx = await Sandbox.create({ metadata: { paddock_name: 'js' } })
  expect(/^i[a-z0-9]{20}$/.test(sbx.sandboxId), 'id shape ' + sbx.sandboxId)
})
step('run', async () => {
  const r = await sbx.commands.run('echo hello; echo oops >&2; exit 3').catch((e) => e.result ?? e)
  expect(r.exitCode === 3, 'exit code ' + JSON.stringify(r))
  expect(r.stdout === 'hello\n', 'stdout ' + JSON.stringify(r.stdout))
  expect(r.stderr === 'oops\n', 'stderr ' + JSON.stringify(r.stderr))
})
step('run exit 0', async () => {
  const r = await sbx.commands.run('printf %s "$HOME"')
  expect(r.exitCode === 0 && r.stdout === '/home/user', JSON.stringify(r))
})
step('users, homes and working directories', async () => {
  // Commands run as the user asked for (user by default), with its home,
  // and see the sandbox's paths.
  const asUser = await sbx.commands.run('echo $(id -un) $HOME $(pwd)')
  expect(asUser.stdout === 'user /home/user /home/user\n', 'as user ' + JSON.stringify(asUser.stdout))
  const asRoot = await sbx.commands.run('echo $(id -un) $HOME $(pwd)', { user: 'root' })
  expect(asRoot.stdout === 'root /root /root\n', 'as root ' + JSON.stringify(asRoot.stdout))
  const inTmp = await sbx.commands.run('pwd', { cwd: '/tmp' })
  expect(inTmp.stdout === '/tmp\n', 'cwd ' + JSON.stringify(inTmp.stdout))
  await sbx.files.write('/opt/paddock/where.txt', 'here')
  const r = await sbx.commands.run('cat /opt/paddock/where.txt && stat -c %U /opt/paddock/where.txt')
  expect(r.stdout === 'here' + 'user\n', 'a file by its absolute path ' + JSON.stringify(r.stdout))
})
step('background with stdin', async () => {
  const h = await sbx.commands.run('cat', { background: true, stdin: true })
  await sbx.commands.sendStdin(h.pid, 'typed')
  await sbx.commands.closeStdin?.(h.pid)
  if (!sbx.commands.closeStdin) await h.kill()
  const r = await h.wait().catch((e) => e.result ?? e)
  expect(r.stdout === 'typed', 'stdout ' + JSON.stringify(r.stdout))
})
step('list and kill', async () => {
  const h = await sbx.commands.run('sleep 30', { background: true })
  const list = await sbx.commands.list()
  expect(list.some((p) => p.pid === h.pid), 'listed ' + JSON.stringify(list))
  expect(await sbx.commands.kill(h.pid), 'killed')
  // Until the killed process has ended, envd still holds it (a second kill
  // then succeeds too); once it has, the kill finds nothing.
  await h.wait().catch(() => {})
  expect((await sbx.commands.kill(h.pid)) === false, 'gone')
})
step('connect to a process', async () => {
  const h = await sbx.commands.run('read x; echo got:$x', { background: true, stdin: true })
  const again = await sbx.commands.connect(h.pid)
  await sbx.commands.sendStdin(h.pid, 'yes\n')
  const r = await again.wait()
  expect(r.stdout.includes('got:yes'), JSON.stringify(r))
})
step('files write and read', async () => {
  await sbx.files.write('/tmp/js/hello.txt', 'from js')
  expect((await sbx.files.read('/tmp/js/hello.txt')) === 'from js', 'read back')
  await sbx.files.write([{ path: '/tmp/js/a.txt', data: 'A' }, { path: '/tmp/js/b.txt', data: 'B' }])
  expect((await sbx.files.read('/tmp/js/b.txt')) === 'B', 'multi write')
  const r = await sbx.commands.run('cat /tmp/js/hello.txt')
  expect(r.stdout === 'from js', 'a process sees the file')
})
step('file metadata', async () => {
  // Kept in the file's extended attributes: echoed by the write, read back
  // by getInfo and list, replaced by the next write.
  const w = await sbx.files.write('/tmp/meta.txt', 'm', { metadata: { Author: 'ada', purpose: 'sdk' } })
  expect(JSON.stringify(w.metadata) === JSON.stringify({ author: 'ada', purpose: 'sdk' }), 'written ' + JSON.stringify(w))
  const info = await sbx.files.getInfo('/tmp/meta.txt')
  expect(info.metadata && info.metadata.author === 'ada' && info.metadata.purpose === 'sdk', 'info ' + JSON.stringify(info))
  const listed = (await sbx.files.list('/tmp')).find((e) => e.name === 'meta.txt')
  expect(listed && listed.metadata && listed.metadata.author === 'ada', 'listed ' + JSON.stringify(listed))
  const again = await sbx.files.write('/tmp/meta.txt', 'n')
  expect(again.metadata === undefined, 'a write without metadata clears it ' + JSON.stringify(again))
})
step('gzip upload', async () => {
  // A compressed upload is stored as what was compressed.
  const text = 'zipped '.repeat(1000)
  await sbx.files.write('/tmp/js/zipped.txt', text, { gzip: true })
  expect((await sbx.files.read('/tmp/js/zipped.txt')) === text, 'read back uncompressed')
  const info = await sbx.files.getInfo('/tmp/js/zipped.txt')
  expect(info.size === text.length, 'its size ' + info.size)
  await sbx.files.remove('/tmp/js/zipped.txt')
})
step('signed file URLs', async () => {
  // The control plane's sandboxes are secure: envd wants the access token,
  // or a signature of the file call. (E2B_SANDBOX_URL points every sandbox
  // at e2btest, so the URL's host cannot name the sandbox: the routing
  // headers do, as E2B's proxy would route the URL's host.)
  expect(!!sbx.envdAccessToken, 'an envd access token')
  const routed = { 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983' }
  const down = await fetch(await sbx.downloadUrl('/tmp/js/hello.txt', { useSignatureExpiration: 60 }), { headers: routed })
  expect(down.status === 200 && (await down.text()) === 'from js', 'signed download ' + down.status)
  const form = new FormData()
  form.append('file', new Blob(['uploaded']), 'up.txt')
  const up = await fetch(await sbx.uploadUrl('/tmp/js/up.txt'), { method: 'POST', body: form, headers: routed })
  expect(up.status === 200, 'signed upload ' + up.status)
  expect((await sbx.files.read('/tmp/js/up.txt')) === 'uploaded', 'uploaded')
  await sbx.files.remove('/tmp/js/up.txt')
  const forged = new URL(await sbx.downloadUrl('/tmp/js/hello.txt'))
  forged.searchParams.set('path', '/etc/hostname')
  const refused = await fetch(forged, { headers: routed })
  expect(refused.status === 401, 'a signature for another path ' + refused.status)
  const unsigned = await fetch(forged.origin + forged.pathname + '?path=/tmp/js/hello.txt', { headers: routed })
  expect(unsigned.status === 401, 'no signature ' + unsigned.status)
  const wrong = await fetch(forged.origin + forged.pathname + '?path=/tmp/js/hello.txt', { headers: { ...routed, 'X-Access-Token': 'wrong' } })
  expect(wrong.status === 401, 'a wrong token ' + wrong.status)
})
step('files service', async () => {
  expect(await sbx.files.exists('/tmp/js/hello.txt'), 'exists')
  expect(!(await sbx.files.exists('/tmp/js/nope')), 'does not exist')
  expect(await sbx.files.makeDir('/tmp/js/dir'), 'made')
  expect((await sbx.files.makeDir('/tmp/js/dir')) === false, 'made already')
  const entries = await sbx.files.list('/tmp/js')
  const names = entries.map((e) => e.name).sort()
  expect(JSON.stringify(names) === JSON.stringify(['a.txt', 'b.txt', 'dir', 'hello.txt']), 'list ' + JSON.stringify(names))
  const info = await sbx.files.getInfo('/tmp/js/hello.txt')
  expect(info.type === 'file' && info.size === 7, 'info ' + JSON.stringify(info))
  await sbx.files.rename('/tmp/js/a.txt', '/tmp/js/c.txt')
  expect(await sbx.files.exists('/tmp/js/c.txt'), 'renamed')
  await sbx.files.remove('/tmp/js/c.txt')
  expect(!(await sbx.files.exists('/tmp/js/c.txt')), 'removed')
  // envd's own words for what is missing.
  const missing = await sbx.files.list('/tmp/js/none/deeper').then(() => null, (e) => String(e.message))
  expect(missing && missing.includes('path not found: lstat /tmp/js/none: no such file or directory'), 'a missing directory: ' + missing)
  const moved = await sbx.files.rename('/tmp/js/nope', '/tmp/js/x').then(() => null, (e) => String(e.message))
  expect(moved && moved.includes('source file not found: rename /tmp/js/nope /tmp/js/x: no such file or directory'), 'a missing source: ' + moved)
})
step('watch a directory', async () => {
  const events = []
  const handle = await sbx.files.watchDir('/tmp/js', (ev) => events.push(ev))
  await sbx.files.write('/tmp/js/watched.txt', 'w')
  for (let i = 0; i < 100 && !events.some((e) => e.name === 'watched.txt' && e.type === 'chmod'); i++) await new Promise((r) => setTimeout(r, 50))
  await handle.stop()
  expect(events.some((e) => e.name === 'watched.txt' && e.type === 'create'), 'events ' + JSON.stringify(events))
  // The write gives the file its user, which inotify (and so envd) reports
  // as a chmod after the create.
  const first = events.findIndex((e) => e.name === 'watched.txt' && e.type === 'create')
  expect(events.slice(first).some((e) => e.name === 'watched.txt' && e.type === 'chmod'), 'a chmod after the create ' + JSON.stringify(events))
})
step('pty', async () => {
  let out = ''
  const term = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => { out += new TextDecoder().decode(d) } })
  await sbx.pty.resize(term.pid, { cols: 100, rows: 30 })
  await sbx.pty.sendInput(term.pid, new TextEncoder().encode('stty size; echo "who=$(id -un)"; exit 4\n'))
  const r = await term.wait().catch((e) => e.result ?? e)
  expect(out.includes('30 100'), 'resized: ' + JSON.stringify(out))
  expect(out.includes('who=user'), 'the terminal is the user\'s: ' + JSON.stringify(out))
  expect(r.exitCode === 4, 'pty exit ' + JSON.stringify(r))
})
step('git', async () => {
  // The SDK's git runs the git program in the sandbox, as the user.
  await sbx.git.init('/home/user/repo', { initialBranch: 'main' })
  await sbx.files.write('/home/user/repo/a.txt', 'a')
  let st = await sbx.git.status('/home/user/repo')
  expect(st.currentBranch === 'main' && st.fileStatus.some((f) => f.name === 'a.txt'), 'status ' + JSON.stringify(st))
  await sbx.git.add('/home/user/repo')
  await sbx.git.commit('/home/user/repo', 'first', { authorName: 'Ada', authorEmail: 'ada@example.com' })
  st = await sbx.git.status('/home/user/repo')
  expect(st.fileStatus.length === 0, 'committed ' + JSON.stringify(st))
  const log = await sbx.commands.run('git -C /home/user/repo log --format="%an %s"')
  expect(log.stdout === 'Ada first\n', 'log ' + JSON.stringify(log.stdout))
})
step('pty connect and kill', async () => {
  let seen = ''
  const term = await sbx.pty.create({ cols: 80, rows: 24, onData: () => {} })
  const again = await sbx.pty.connect(term.pid, { onData: (d) => { seen += new TextDecoder().decode(d) } })
  await sbx.pty.sendInput(term.pid, new TextEncoder().encode('echo via-connect\n'))
  for (let i = 0; i < 500 && !seen.includes('via-connect'); i++) await new Promise((r) => setTimeout(r, 10))
  expect(seen.includes('via-connect'), 'a connected terminal sees the output ' + JSON.stringify(seen))
  expect(await sbx.pty.kill(term.pid) === true, 'killed')
  const r = await again.wait().catch((e) => e.result ?? e)
  expect(r.exitCode !== 0 || r.error, 'ended by the kill ' + JSON.stringify(r))
})
step('running, host, network', async () => {
  expect(await sbx.isRunning() === true, 'running')
  expect(sbx.getHost(8080).startsWith('8080-' + sbx.sandboxId + '.'), 'host ' + sbx.getHost(8080))
  await sbx.updateNetwork({ denyOut: ['0.0.0.0/0'] })
})
step('timeout, info, list, pause, connect', async () => {
  await sbx.setTimeout(120_000)
  const info = await sbx.getInfo()
  expect(info.sandboxId === sbx.sandboxId && info.metadata.paddock_name === 'js', 'info ' + JSON.stringify(info))
  const paginator = Sandbox.list({ query: { metadata: { paddock_name: 'js' } } })
  const items = await paginator.nextItems()
  expect(items.length === 1 && items[0].sandboxId === sbx.sandboxId, 'list ' + JSON.stringify(items))
  await sbx.betaPause()
  expect((await sbx.getInfo()).state === 'paused', 'paused')
  const back = await Sandbox.connect(sbx.sandboxId)
  expect((await back.getInfo()).state === 'running', 'resumed')
  const r = await back.commands.run('cat /tmp/js/hello.txt')
  expect(r.stdout === 'from js', 'the disk survived the pause')
})
step('metrics', async () => {
  const burner = await sbx.commands.run('while :; do :; done', { background: true })
  let last
  for (let i = 0; i < 400; i++) { // until the burner's CPU shows, bounded
    const got = await sbx.getMetrics()
    last = got[got.length - 1]
    if (last && last.cpuUsedPct > 0 && last.memUsed > 0) break
    await new Promise((r) => setTimeout(r, 50))
  }
  await burner.kill()
  expect(last && last.cpuUsedPct > 0 && last.cpuUsedPct <= 100 && last.memUsed > 0, 'usage ' + JSON.stringify(last))
  expect(last.cpuCount === 2 && last.memTotal === 512 * 1024 * 1024 && last.diskTotal === 1024 * 1024 * 1024, 'resources ' + JSON.stringify(last))
  expect(last.timestamp instanceof Date && !isNaN(last.timestamp) && last.diskUsed > 0, 'sample ' + JSON.stringify(last))
  const none = await Sandbox.getMetrics(sbx.sandboxId, { start: new Date(1000), end: new Date(2000) })
  expect(none.length === 0, 'an empty range ' + JSON.stringify(none))
})
step('snapshots and forks', async () => {
  await sbx.files.write('/home/user/state.txt', 'mid-task')
  const snap = await sbx.createSnapshot({ name: 'js-snap' })
  expect(snap.snapshotId === 'e2btest/js-snap:default' && snap.names[0] === 'e2btest/js-snap', 'made ' + JSON.stringify(snap))
  const listed = await Sandbox.listSnapshots({ sandboxId: sbx.sandboxId }).nextItems()
  expect(listed.some((x) => x.snapshotId === snap.snapshotId), 'listed ' + JSON.stringify(listed))
  const fromSnap = await Sandbox.create(snap.snapshotId)
  expect((await fromSnap.files.read('/home/user/state.txt')) === 'mid-task', 'a sandbox from the snapshot')
  await fromSnap.kill()
  const forks = await sbx.fork({ count: 2 })
  expect(forks.length === 2 && forks.every((f) => f instanceof Sandbox), 'forks ' + forks)
  for (const f of forks) {
    const r = await f.commands.run('cat /home/user/state.txt')
    expect(r.stdout === 'mid-task' && f.sandboxId !== sbx.sandboxId, 'a fork ' + JSON.stringify(r))
    await f.kill()
  }
  expect((await Sandbox.deleteSnapshot(snap.snapshotId)) === true, 'deleted')
  expect((await Sandbox.deleteSnapshot(snap.snapshotId)) === false, 'deleted once')
})
step('template names and tags', async () => {
  await sbx.files.write('/home/user/state.txt', 'v1')
  const snap = await sbx.createSnapshot({ name: 'tagged:v1' })
  expect((await Template.exists('tagged')) === true && (await Template.aliasExists('e2btest/tagged')) === true, 'exists')
  expect((await Template.exists('tagged:v1')) === true && (await Template.exists('tagged:v2')) === false, 'by tag')
  expect((await Template.exists('nothing')) === false, 'none')
  expect((await Template.exists('base')) === true, 'the base template is E2B\'s: 403, which the SDK takes as existing')
  const assigned = await Template.assignTags('tagged:v1', ['Stable', 'prod', 'prod'])
  expect(JSON.stringify(assigned.tags) === '["prod","stable"]' && /^[0-9a-f-]{36}$/.test(assigned.buildId), 'assigned ' + JSON.stringify(assigned))
  const fromTag = await Sandbox.create('tagged:stable')
  expect((await fromTag.files.read('/home/user/state.txt')) === 'v1', 'a sandbox from an assigned tag')
  await fromTag.kill()
  const tags = await Template.getTags(snap.snapshotId.split(':')[0])
  expect(JSON.stringify(tags.map((t) => t.tag)) === '["prod","stable","v1"]' && tags.every((t) => t.buildId === assigned.buildId && t.createdAt instanceof Date),
    'tags ' + JSON.stringify(tags))
  await Template.removeTags('tagged', 'prod')
  expect(JSON.stringify((await Template.getTags('tagged')).map((t) => t.tag)) === '["stable","v1"]', 'removed')
  for (const [what, call, pattern] of [
    ['the default tag', () => Template.removeTags('tagged', 'default'), /Cannot delete the 'default' tag/],
    ['a tag in the name', () => Template.removeTags('tagged:v1', 'stable'), /should not contain a tag/],
    ['a UUID tag', () => Template.assignTags('tagged:v1', '1b4e28ba-2fa1-11d2-883f-0016d3cca427'), /tag cannot be a UUID/],
    ['no such tag', () => Template.assignTags('tagged:v9', 'x'), /Template 'tagged:v9' with tag 'v9' not found/],
    ['the base template', () => Template.getTags('base'), /You don't have access to sandbox template 'base'/],
    ['another namespace', () => Template.getTags('other/tagged'), /template 'other\/tagged' not found|namespace/],
  ]) {
    const e = await call().then(() => null, (e) => e)
    expect(e instanceof TemplateError && pattern.test(e.message), what + ': ' + e)
  }
  expect((await Sandbox.deleteSnapshot(snap.snapshotId)) === true, 'deleted')
})
step('secrets', async () => {
  const made = await Secret.create('Paddock-Key', 'first value', { metadata: { team: 'a' } })
  expect(/^sec_[0-9a-z]{26}$/.test(made.secretId), 'id ' + made.secretId)
  expect(made.name === 'paddock-key' && made.version === 1 && made.metadata.team === 'a', 'made ' + JSON.stringify(made))
  expect(made.createdAt instanceof Date && !isNaN(made.createdAt), 'created at ' + made.createdAt)
  const taken = await Secret.create('paddock-key', 'again').catch((e) => e)
  expect(taken instanceof SecretError, 'a name taken ' + taken)
  const updated = await Secret.update('paddock-key', 'second value')
  expect(updated.version === 2 && updated.metadata.team === 'a', 'updated ' + JSON.stringify(updated))
  const info = await Secret.getInfo(made.secretId)
  expect(info.name === 'paddock-key' && info.version === 2, 'info ' + JSON.stringify(info))
  expect(JSON.stringify(info).indexOf('value') < 0, 'no value answered')
  await Secret.create('other', 'v')
  const pages = Secret.list({ limit: 1 })
  const names = []
  while (pages.hasNext) names.push(...(await pages.nextItems()).map((x) => x.name))
  expect(JSON.stringify(names) === '["paddock-key","other"]', 'listed ' + JSON.stringify(names))
  expect((await Secret.exists('nope')) === false && (await Secret.exists('PADDOCK-KEY')) === true, 'exists')
  expect((await Secret.destroy('paddock-key')) === true && (await Secret.destroy(made.secretId)) === false, 'destroyed')
  expect(Secret.fill('other') === '${e2b.secrets.other}', 'fill')
})
step('volumes', async () => {
  const vol = await Volume.create('data')
  expect(/^[0-9a-f-]{36}$/.test(vol.volumeId) && vol.name === 'data' && vol.token.split('.').length === 3, 'made ' + JSON.stringify(vol))
  const taken = await Volume.create('data').catch((e) => e)
  expect(taken instanceof VolumeError && /Volume with name 'data' already exists/.test(taken.message), 'a name taken: ' + taken)
  const badName = await Volume.create('no spaces').catch((e) => e)
  expect(badName instanceof VolumeError && /Invalid volume name/.test(badName.message), 'a bad name: ' + badName)

  // Content, as the volume service keeps it: its default owner and modes.
  const written = await vol.writeFile('/notes/a.txt', 'hello', { force: true })
  expect(written.type === 'file' && written.path === '/notes/a.txt' && written.name === 'a.txt' && written.size === 5 &&
    written.uid === 9090 && written.gid === 9090 && written.mode === 0o666 && written.mtime instanceof Date, 'written ' + JSON.stringify(written))
  expect((await vol.readFile('/notes/a.txt')) === 'hello', 'read')
  const again = await vol.writeFile('/notes/a.txt', 'x').catch((e) => e)
  expect(again instanceof VolumeError && /file exists/.test(again.message), 'no overwrite without force: ' + again)
  const noParent = await vol.writeFile('/none/b.txt', 'x').catch((e) => e)
  expect(noParent instanceof VolumePathNotFoundError, 'no parent without force: ' + noParent)
  const dir = await vol.makeDir('/deep/er', { force: true, mode: 0o750 })
  expect(dir.type === 'directory' && dir.mode === 0o750 && dir.path === '/deep/er', 'dir ' + JSON.stringify(dir))
  const listing = await vol.list('/', { depth: 2 })
  expect(JSON.stringify(listing.map((e) => e.path)) === '["/deep","/deep/er","/notes","/notes/a.txt"]', 'listed ' + JSON.stringify(listing.map((e) => e.path)))
  const tooDeep = await vol.list('/', { depth: 11 }).catch((e) => e)
  expect(tooDeep instanceof VolumeError && /depth must be between 1 and 10/.test(tooDeep.message), 'depth: ' + tooDeep)
  expect((await vol.exists('/notes/a.txt')) === true && (await vol.exists('/nope')) === false, 'exists')
  const updated = await vol.updateMetadata('/notes/a.txt', { mode: 0o640, uid: 1000 })
  expect(updated.mode === 0o640 && updated.uid === 1000 && updated.gid === 9090, 'updated ' + JSON.stringify(updated))
  await vol.remove('/deep')
  const gone = await vol.remove('/deep').catch((e) => e)
  expect(gone instanceof VolumePathNotFoundError, 'removed: ' + gone)
  const root = await vol.remove('/').catch((e) => e)
  expect(root instanceof VolumeError && /cannot delete root/.test(root.message), 'the root stays: ' + root)

  // A sandbox mounting it sees the same files (as root: the volume's root
  // directory is root's, mode 0700, as the volume service makes it).
  const box = await Sandbox.create({ volumeMounts: { '/mnt/data': vol } })
  const r = await box.commands.run('cat /mnt/data/notes/a.txt && echo more > /mnt/data/from-box', { user: 'root' })
  expect(r.stdout === 'hello', 'in the sandbox: ' + JSON.stringify(r.stdout))
  expect((await vol.readFile('/from-box')) === 'more\n', 'from the sandbox')
  const info = await box.getInfo()
  expect(JSON.stringify(info.volumeMounts) === '[{"name":"data","path":"/mnt/data"}]', 'mounts ' + JSON.stringify(info.volumeMounts))
  await box.kill()
  const badMounts = await Sandbox.create({ volumeMounts: { 'relative': 'data', '/x': 'none' } }).catch((e) => e)
  expect(badMounts && /invalid mounts:/.test(badMounts.message) && /#0: path must be absolute/.test(badMounts.message) &&
    /#1: volume 'none' not found/.test(badMounts.message), 'bad mounts: ' + badMounts)

  const connected = await Volume.connect(vol.volumeId)
  expect(connected.name === 'data' && (await connected.readFile('/from-box')) === 'more\n', 'connected')
  expect((await Volume.list()).some((v) => v.volumeId === vol.volumeId && v.name === 'data'), 'listed')
  expect((await Volume.destroy(vol.volumeId)) === true && (await Volume.destroy(vol.volumeId)) === false, 'destroyed')
  const missing = await Volume.getInfo(vol.volumeId).catch((e) => e)
  expect(missing instanceof VolumeNotFoundError, 'gone: ' + missing)
})
step('kill', async () => {
  await sbx.kill()
  expect((await Sandbox.list().nextItems()).length === 0, 'gone')
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
