"""The client against a running paddockd (started by clients/clients_test.go,
which names it in the environment): PADDOCKD_URL serves the local provider
and the fake with the tokens below; PADDOCKD_FAILING_URL answers every exec
with the failure its program names (ERROR_KIND_...)."""

import hashlib
import os
import secrets
import unittest

import grpc

from paddock_client import Client, PaddockError, kind_name
from paddock_client.gen import messages_pb2 as pb


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run these tests through go test ./clients")
    return value


def unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(4)}"


async def read_until(process, want: bytes) -> bytes:
    got = b""
    while want not in got:
        f = await anext(process)
        if f.kind != "stdout":
            raise AssertionError(f"want stdout up to {want!r}, got {f} after {got!r}")
        got += f.data
    return got


class ClientTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.url = env("PADDOCKD_URL")
        self.admin = Client(self.url, env("PADDOCKD_TOKEN"))

    async def asyncTearDown(self):
        await self.admin.close()

    async def assertFails(self, awaitable, kind: str) -> PaddockError:
        with self.assertRaises(PaddockError) as caught:
            await awaitable
        self.assertEqual(caught.exception.kind, kind, str(caught.exception))
        return caught.exception

    async def test_exec_answers_output_and_exit_code(self):
        sb = await self.admin.create("local", unique("py-exec"))
        ok = await sb.exec(["echo", "hello"])
        self.assertEqual((ok.stdout, ok.exit_code), (b"hello\n", 0))
        late = await self.assertFails(sb.exec(["sh", "-c", "sleep 5; echo late"], timeout=0.5), "unavailable")
        self.assertIn("exec_timeout", late.detail)
        self.assertEqual(late.failure.exec_timeout.ToNanoseconds(), 500_000_000, "the timeout it ran under")
        failed = await sb.exec(["sh", "-c", "echo oops >&2; exit 3"])
        self.assertEqual(failed.exit_code, 3, "a non-zero exit is a result")
        self.assertEqual((failed.stdout, failed.stderr), (b"", b"oops\n"))
        self.assertIn(sb.name, await self.admin.list("local"))
        await sb.destroy()
        await self.assertFails(sb.info(), "not_found")

    async def test_spawn_streams_100_mb_every_byte_in_order(self):
        sb = await self.admin.create("local", unique("py-spawn"))
        try:
            p = await sb.spawn(["sh", "-c", "head -c 100000000 /dev/urandom | tee big.bin"])
            digest, size, last = hashlib.sha256(), 0, None
            async for f in p:
                if f.kind == "stdout":
                    digest.update(f.data)
                    size += len(f.data)
                else:
                    last = f
            self.assertEqual((last.kind, last.code), ("exit", 0))
            self.assertEqual(size, 100_000_000)
            theirs = await sb.exec(["sha256sum", "big.bin"])
            self.assertEqual(theirs.stdout.split()[0].decode(), digest.hexdigest())
        finally:
            await sb.destroy()

    async def test_stdin_reaches_the_command_and_its_end_ends_it(self):
        sb = await self.admin.create("local", unique("py-stdin"))
        try:
            p = await sb.spawn(["cat"], stdin=True)
            await p.write("hello\n")
            await p.write(b"world\n")
            await p.close_stdin()
            r = await p.wait()
            self.assertEqual((r.stdout, r.exit_code), (b"hello\nworld\n", 0))
            await self.assertFails(p.write("late"), "command_exited")
        finally:
            await sb.destroy()

    async def test_a_detached_session_goes_on_and_attach_replays_it(self):
        sb = await self.admin.create("local", unique("py-attach"))
        try:
            p = await sb.spawn(["sh", "-c", "echo one; read x; echo two $x"], stdin=True, detachable=True)
            self.assertNotEqual(p.session_id, "")
            self.assertEqual(await read_until(p, b"one\n"), b"one\n")
            p.detach()
            self.assertIn(p.session_id, [s.id for s in await sb.sessions()])
            again = await sb.attach(p.session_id, stdin=True)
            self.assertEqual(await read_until(again, b"one\n"), b"one\n", "the replay starts at the session's start")
            await again.write("x\n")
            self.assertEqual(await read_until(again, b"two x\n"), b"two x\n")
            end = await anext(again)
            self.assertEqual((end.kind, end.code), ("exit", 0))
        finally:
            await sb.destroy()

    async def test_files(self):
        sb = await self.admin.create("local", unique("py-files"))
        try:
            data = secrets.token_bytes(3 << 20)
            await sb.files.mkdir("/data/in", parents=True)
            await sb.files.write("/data/in/a.bin", data, mode=0o600)
            self.assertEqual(await sb.files.read("/data/in/a.bin"), data)
            info = await sb.files.stat("/data/in/a.bin")
            self.assertEqual((info.size, info.mode & 0o777), (len(data), 0o600))
            await sb.files.rename("/data/in/a.bin", "/data/in/b.bin")
            self.assertEqual([e.name for e in await sb.files.list("/data/in")], ["b.bin"])
            await sb.files.remove("/data", recursive=True)
            await self.assertFails(sb.files.stat("/data/in/b.bin"), "not_found")
            await self.assertFails(sb.files.read("/data/in/b.bin"), "not_found")
        finally:
            await sb.destroy()

    async def test_paddockds_own_failures_are_of_their_kind(self):
        await self.assertFails(self.admin.create("nowhere", "x"), "unknown_provider")
        await self.assertFails(self.admin.create("fake", "a/b"), "invalid")
        await self.assertFails(self.admin.sandbox("fake", unique("absent")).info(), "not_found")
        name = unique("py-twice")
        sb = await self.admin.create_new("fake", name)
        await self.assertFails(self.admin.create_new("fake", name), "already_exists")
        frames = [f async for f in await sb.spawn(["x", "out:partial", "drop"])]
        self.assertEqual([f.kind for f in frames], ["stdout", "error"])
        self.assertEqual(frames[0].data, b"partial")
        self.assertEqual(frames[1].error.kind, "unavailable", "a connection that closed before its exit")
        await self.assertFails(sb.exec(["x", "drop"]), "unavailable")
        await sb.destroy()

    async def test_every_kind_of_the_taxonomy_comes_through_as_its_own(self):
        async with Client(env("PADDOCKD_FAILING_URL")) as failing:
            sb = failing.sandbox("fake", "anything")
            kinds = [v for v in pb.ErrorKind.values() if v != pb.ERROR_KIND_UNSPECIFIED]
            self.assertEqual(len(kinds), 15)
            for k in kinds:
                err = await self.assertFails(sb.exec([pb.ErrorKind.Name(k)]), kind_name(k))
                self.assertEqual((err.failure.kind, err.detail), (k, "injected"))

    async def test_a_wrong_token_is_refused(self):
        async with Client(self.url, "not-a-token") as stranger:
            err = await self.assertFails(stranger.list("fake"), "unauthenticated")
            self.assertEqual(err.code, grpc.StatusCode.UNAUTHENTICATED)
            self.assertNotIn("not-a-token", str(err))
        async with Client(self.url) as anonymous:
            await self.assertFails(anonymous.list("fake"), "unauthenticated")

    async def test_a_tenant_sees_only_its_own_sandboxes(self):
        async with Client(self.url, env("PADDOCKD_TENANT_A_TOKEN")) as a, Client(self.url, env("PADDOCKD_TENANT_B_TOKEN")) as b:
            name = unique("py-mine")
            mine = await a.create("fake", name)
            self.assertEqual(mine.name, name, "a tenant speaks its own names")
            self.assertIn(name, await a.list("fake"))
            self.assertNotIn(name, await b.list("fake"))
            await self.assertFails(b.sandbox("fake", name).info(), "not_found")
            held = await mine.spawn(["x", "stay"], stdin=True)
            theirs = pb.WriteStdinRequest(command=held.command, data=b"\x01")
            await self.assertFails(b.call("WriteStdin", theirs, pb.WriteStdinReply), "command_exited")
            await held.close_stdin()
            self.assertEqual((await held.wait()).exit_code, 0)
            await mine.destroy()


if __name__ == "__main__":
    unittest.main()
