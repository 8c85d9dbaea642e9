"""Paddock's Python client: sandboxes on every provider paddockd serves
(local, docker, Sprites, E2B, Daytona, the fake), over gRPC (asyncio).

A Sandbox runs commands (exec for the whole result, spawn for its frames
as they come, an async iterator), attaches to detached sessions and reads
and writes files; every failure is a PaddockError naming the taxonomy's
kind ("not_found", "unavailable", ...).

    async with Client("127.0.0.1:8423") as client:
        sandbox = await client.create("local", "demo")
        result = await sandbox.exec(["echo", "hello"])
"""

from .client import (
    Client,
    ExecResult,
    Files,
    Frame,
    PaddockError,
    Process,
    Sandbox,
    kind_name,
)

__all__ = [
    "Client",
    "ExecResult",
    "Files",
    "Frame",
    "PaddockError",
    "Process",
    "Sandbox",
    "kind_name",
]
