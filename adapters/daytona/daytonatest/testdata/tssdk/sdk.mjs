// Drives Daytona's official TypeScript SDK against daytonatest:
// DAYTONA_API_URL points at it, DAYTONA_API_KEY is its key, polling mode
// (no socket.io). Each step prints "ok <step>"; the first failure prints
// "FAIL <step>: <error>" and exits 1.
import { Daytona } from '@daytonaio/sdk'

const steps = []
const step = (name, fn) => steps.push([name, fn])
const expect = (cond, what) => { if (!cond) throw new Error(what) }
const daytona = new Daytona({ useDeprecatedPolling: true })
let sbx

step('create', async () => {
  sbx = await daytona.create({ name: 'ts', labels: { paddock: '1' } })
  expect(sbx.state === 'started', 'state ' + sbx.state)
})
step('execute', async () => {
  const r = await sbx.process.executeCommand('echo hello; echo oops >&2; exit 3')
  expect(r.exitCode === 3, 'exit ' + JSON.stringify(r))
  expect(r.result.includes('hello') && r.result.includes('oops'), 'result ' + JSON.stringify(r.result))
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
  const sync = await sbx.process.executeSessionCommand('s1', { command: 'echo sync; (exit 4)' })
  expect(sync.exitCode === 4, 'sync ' + JSON.stringify(sync))
  const sessions = await sbx.process.listSessions()
  expect(sessions.some((s) => s.sessionId === 's1'), 'sessions ' + JSON.stringify(sessions))
  await sbx.process.deleteSession('s1')
})
step('files', async () => {
  await sbx.fs.uploadFile(Buffer.from('from ts'), '/tmp/ts/hello.txt')
  const back = await sbx.fs.downloadFile('/tmp/ts/hello.txt')
  expect(back.toString() === 'from ts', 'read back ' + back.toString())
  const r = await sbx.process.executeCommand('cat /tmp/ts/hello.txt')
  expect(r.result === 'from ts', 'a process sees it ' + JSON.stringify(r))
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
