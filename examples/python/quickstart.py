"""Paddock from Python: a sandbox on paddockd's local provider, a command's
whole result, another's output as it comes, a file written and read back.

    go run ./cmd/paddockd &
    PYTHONPATH=clients/python python3 examples/python/quickstart.py
"""

import asyncio
import os

from paddock_client import Client


async def main() -> None:
    url = os.environ.get("PADDOCKD_URL", "127.0.0.1:8423")
    async with Client(url, os.environ.get("PADDOCKD_TOKEN")) as client:
        sandbox = await client.create("local", "quickstart-py")
        try:
            result = await sandbox.exec(["echo", "hello from a sandbox"])
            print(result.stdout.decode(), end="")
            process = await sandbox.spawn(["sh", "-c", "for i in 1 2 3; do echo tick $i; done"])
            async for frame in process:
                if frame.kind == "stdout":
                    print(frame.data.decode(), end="")
                elif frame.kind == "exit":
                    print("exit", frame.code)
            await sandbox.files.write("/notes/hello.txt", "written from python\n")
            print((await sandbox.files.read("/notes/hello.txt")).decode(), end="")
        finally:
            await sandbox.destroy()


asyncio.run(main())
