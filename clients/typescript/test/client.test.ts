// The client against a running paddockd (started by clients/clients_test.go,
// which names it in the environment): PADDOCKD_URL serves the local
// provider and the fake with the tokens below; PADDOCKD_FAILING_URL answers
// every exec with the failure its program names (ERROR_KIND_...).
import { strict as assert } from "node:assert";
import { createHash, randomBytes } from "node:crypto";
import { after, describe, test } from "node:test";
import { Code } from "@connectrpc/connect";
import { ErrorKind, PaddockClient, PaddockError, kindName, type Frame, type Process } from "../src/index.js";

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run these tests through go test ./clients`);
  return v;
}

const url = env("PADDOCKD_URL");
const admin = new PaddockClient({ baseUrl: url, token: env("PADDOCKD_TOKEN") });
after(() => admin.close());
const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;
const text = (b: Uint8Array) => new TextDecoder().decode(b);

async function rejectsWith(p: Promise<unknown>, kind: string): Promise<PaddockError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof PaddockError, `not a PaddockError: ${err}`);
    assert.equal(err.kind, kind, err.message);
    return err;
  }
  assert.fail(`resolved; want a ${kind} failure`);
}

/** next reads frames until want's text was all seen on stdout. */
async function readUntil(frames: AsyncIterator<Frame>, want: string): Promise<string> {
  let got = "";
  while (!got.includes(want)) {
    const f = await frames.next();
    assert.ok(!f.done, `the stream ended before ${JSON.stringify(want)} (got ${JSON.stringify(got)})`);
    assert.equal(f.value.kind, "stdout", JSON.stringify(f.value));
    got += text((f.value as { data: Uint8Array }).data);
  }
  return got;
}

describe("a sandbox on paddockd's local provider", () => {
  test("exec answers output and exit code; destroy removes it", async () => {
    const sb = await admin.create("local", unique("ts-exec"));
    const ok = await sb.exec(["echo", "hello"]);
    assert.equal(text(ok.stdout), "hello\n");
    assert.equal(ok.exitCode, 0);
    const late = await sb.exec(["sh", "-c", "sleep 5; echo late"], { timeoutSeconds: 0.5 }).catch((e) => e);
    assert.ok(late instanceof PaddockError && late.kind === "unavailable", `a 0.5 s timeout ends a 5 s command: ${late}`);
    assert.match(late.detail, /exec_timeout/);
    assert.equal(late.failure?.execTimeout?.nanos, 500_000_000, "the timeout it ran under, to the nanosecond");
    const failed = await sb.exec(["sh", "-c", "echo oops >&2; exit 3"]);
    assert.equal(failed.exitCode, 3, "a non-zero exit is a result");
    assert.equal(text(failed.stderr), "oops\n");
    assert.equal(text(failed.stdout), "");
    assert.ok((await admin.list("local")).includes(sb.handle.name));
    await sb.destroy();
    await rejectsWith(sb.info(), "not_found");
  });

  test("spawn streams 100 MB, every byte in order", async () => {
    const sb = await admin.create("local", unique("ts-spawn"));
    try {
      const p = await sb.spawn(["sh", "-c", "head -c 100000000 /dev/urandom | tee big.bin"]);
      const sum = createHash("sha256");
      let bytes = 0;
      let exit: Frame | undefined;
      for await (const f of p) {
        if (f.kind === "stdout") {
          sum.update(f.data);
          bytes += f.data.length;
        } else exit = f;
      }
      assert.deepEqual(exit, { kind: "exit", code: 0 });
      assert.equal(bytes, 100_000_000);
      const theirs = await sb.exec(["sha256sum", "big.bin"]);
      assert.equal(text(theirs.stdout).split(" ")[0], sum.digest("hex"));
    } finally {
      await sb.destroy();
    }
  });

  test("stdin reaches the command, and its end ends it", async () => {
    const sb = await admin.create("local", unique("ts-stdin"));
    try {
      const p = await sb.spawn(["cat"], { stdin: true });
      await p.write("hello\n");
      await p.write(new TextEncoder().encode("world\n"));
      await p.closeStdin();
      const r = await p.wait();
      assert.equal(text(r.stdout), "hello\nworld\n");
      assert.equal(r.exitCode, 0);
      await rejectsWith(p.write("late"), "command_exited");
    } finally {
      await sb.destroy();
    }
  });

  test("a detached session goes on, and attach replays it from its start", async () => {
    const sb = await admin.create("local", unique("ts-attach"));
    try {
      const p = await sb.spawn(["sh", "-c", "echo one; read x; echo two $x"], { stdin: true, detachable: true });
      assert.notEqual(p.sessionId, "");
      const frames = p[Symbol.asyncIterator]();
      assert.equal(await readUntil(frames, "one\n"), "one\n");
      p.detach();
      const sessions = await sb.sessions();
      assert.ok(sessions.some((s) => s.id === p.sessionId), `session ${p.sessionId} not among ${sessions.map((s) => s.id)}`);
      const again: Process = await sb.attach(p.sessionId, { stdin: true });
      const replay = again[Symbol.asyncIterator]();
      assert.equal(await readUntil(replay, "one\n"), "one\n", "the replay starts at the session's start");
      await again.write("x\n");
      assert.equal(await readUntil(replay, "two x\n"), "two x\n");
      const end = await replay.next();
      assert.deepEqual(end.value, { kind: "exit", code: 0 });
    } finally {
      await sb.destroy();
    }
  });

  test("files: write, read, stat, list, rename, remove", async () => {
    const sb = await admin.create("local", unique("ts-files"));
    try {
      const data = randomBytes(3 << 20);
      await sb.files.mkdir("/data/in", { parents: true });
      await sb.files.write("/data/in/a.bin", data, 0o600);
      assert.ok(Buffer.from(await sb.files.read("/data/in/a.bin")).equals(data));
      const info = await sb.files.stat("/data/in/a.bin");
      assert.equal(Number(info.size), data.length);
      assert.equal(info.mode & 0o777, 0o600);
      await sb.files.rename("/data/in/a.bin", "/data/in/b.bin");
      assert.deepEqual((await sb.files.list("/data/in")).map((e) => e.name), ["b.bin"]);
      await sb.files.remove("/data", { recursive: true });
      await rejectsWith(sb.files.stat("/data/in/b.bin"), "not_found");
      await rejectsWith(sb.files.read("/data/in/b.bin"), "not_found");
    } finally {
      await sb.destroy();
    }
  });
});

describe("failures", () => {
  test("paddockd's own: each is a PaddockError of its kind", async () => {
    await rejectsWith(admin.create("nowhere", "x"), "unknown_provider");
    await rejectsWith(admin.create("fake", "a/b"), "invalid");
    await rejectsWith(admin.sandbox("fake", unique("absent")).info(), "not_found");
    const name = unique("ts-twice");
    const sb = await admin.createNew("fake", name);
    await rejectsWith(admin.createNew("fake", name), "already_exists");
    const dropped = await sb.spawn(["x", "out:partial", "drop"]);
    const frames: Frame[] = [];
    for await (const f of dropped) frames.push(f);
    assert.equal(frames.length, 2);
    assert.deepEqual(frames[0], { kind: "stdout", data: new TextEncoder().encode("partial") });
    assert.equal(frames[1].kind, "error");
    assert.equal((frames[1] as { error: PaddockError }).error.kind, "unavailable", "a connection that closed before its exit");
    await rejectsWith(sb.exec(["x", "drop"]), "unavailable");
    await sb.destroy();
  });

  test("every kind of the taxonomy comes through as its own", async () => {
    const failing = new PaddockClient({ baseUrl: env("PADDOCKD_FAILING_URL") });
    after(() => failing.close());
    const sb = failing.sandbox("fake", "anything");
    const kinds = Object.values(ErrorKind).filter((k): k is ErrorKind => typeof k === "number" && k !== ErrorKind.UNSPECIFIED);
    assert.equal(kinds.length, 15);
    for (const k of kinds) {
      const err = await rejectsWith(sb.exec([`ERROR_KIND_${ErrorKind[k]}`]), kindName(k));
      assert.equal(err.failure?.kind, k);
      assert.equal(err.detail, "injected");
    }
  });

  test("a wrong token is refused", async () => {
    const stranger = new PaddockClient({ baseUrl: url, token: "not-a-token" });
    const anonymous = new PaddockClient({ baseUrl: url });
    after(() => (stranger.close(), anonymous.close()));
    const err = await rejectsWith(stranger.list("fake"), "unauthenticated");
    assert.equal(err.code, Code.Unauthenticated);
    assert.ok(!err.message.includes("not-a-token"));
    await rejectsWith(anonymous.list("fake"), "unauthenticated");
  });

  test("a tenant sees only its own sandboxes", async () => {
    const a = new PaddockClient({ baseUrl: url, token: env("PADDOCKD_TENANT_A_TOKEN") });
    const b = new PaddockClient({ baseUrl: url, token: env("PADDOCKD_TENANT_B_TOKEN") });
    after(() => (a.close(), b.close()));
    const name = unique("ts-mine");
    const mine = await a.create("fake", name);
    assert.equal(mine.handle.name, name, "a tenant speaks its own names");
    assert.ok((await a.list("fake")).includes(name));
    assert.ok(!(await b.list("fake")).includes(name));
    await rejectsWith(b.sandbox("fake", name).info(), "not_found");
    const held = await mine.spawn(["x", "stay"], { stdin: true });
    await rejectsWith(b.rpc.writeStdin({ command: held.command, data: new Uint8Array([1]) }).catch((e) => { throw PaddockError.from(e); }), "command_exited");
    await held.closeStdin();
    assert.equal((await held.wait()).exitCode, 0);
    await mine.destroy();
  });
});
