"""The client: Client, Sandbox, Process, Files and PaddockError."""

from __future__ import annotations

import dataclasses
from typing import AsyncIterable, AsyncIterator, Iterable, Mapping, Sequence, Union

import grpc
import grpc.aio
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

from .gen import messages_pb2 as pb
from .gen import service_pb2 as svc

_SERVICE = "/paddock.messages.v1.Paddock/"
_FAILURE_TYPE = "type.googleapis.com/paddock.messages.v1.Failure"

# Failures that carry no Failure (they never reached the runtime: auth, the
# transport, a malformed request) are named by their gRPC code.
_CODE_KINDS = {
    grpc.StatusCode.UNAUTHENTICATED: "unauthenticated",
    grpc.StatusCode.PERMISSION_DENIED: "denied",
    grpc.StatusCode.INVALID_ARGUMENT: "invalid",
    grpc.StatusCode.NOT_FOUND: "not_found",
    grpc.StatusCode.UNAVAILABLE: "unavailable",
    grpc.StatusCode.DEADLINE_EXCEEDED: "unavailable",
    grpc.StatusCode.CANCELLED: "unavailable",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "rate_limited",
    grpc.StatusCode.UNIMPLEMENTED: "not_supported",
}


def kind_name(kind: int) -> str:
    """The client's name of an ErrorKind: ERROR_KIND_NOT_FOUND is "not_found"."""
    try:
        return pb.ErrorKind.Name(kind).removeprefix("ERROR_KIND_").lower()
    except ValueError:
        return "other"


class PaddockError(Exception):
    """Every failure of the client: its kind ("not_found", "unavailable", ...,
    or "unauthenticated" for a request paddockd did not accept), the detail
    paddockd gave, the gRPC code it came with and, where paddockd sent one,
    the Failure itself (status, retry hint, provider, operation)."""

    def __init__(self, kind: str, detail: str, code: grpc.StatusCode | None = None, failure: pb.Failure | None = None):
        super().__init__(f"paddock: {kind}: {detail}" if detail else f"paddock: {kind}")
        self.kind = kind
        self.detail = detail
        self.code = code
        self.failure = failure

    @classmethod
    def from_rpc(cls, err: grpc.aio.AioRpcError) -> "PaddockError":
        """The PaddockError of a failed call: the Failure its status carries,
        else its code's kind."""
        for key, value in err.trailing_metadata() or ():
            if key == "grpc-status-details-bin" and isinstance(value, bytes):
                for type_url, payload in _status_details(value):
                    if type_url == _FAILURE_TYPE:
                        f = pb.Failure.FromString(payload)
                        return cls(kind_name(f.kind), f.detail, err.code(), f)
        return cls(_CODE_KINDS.get(err.code(), "other"), err.details() or "", err.code())


def _status_type():
    """The message class of google.rpc.Status (code, message, details as
    Any), which gRPC sends a failure's details in: declared here, as this
    client needs no other of Google's protos."""
    fd = descriptor_pb2.FileDescriptorProto(
        name="paddock_client/rpc_status.proto", package="paddock_client.rpc", syntax="proto3",
        dependency=["google/protobuf/any.proto"],
    )
    m = fd.message_type.add(name="Status")
    F = descriptor_pb2.FieldDescriptorProto
    m.field.add(name="code", number=1, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    m.field.add(name="message", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    m.field.add(name="details", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED, type_name=".google.protobuf.Any")
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)
    pool.AddSerializedFile(fd.SerializeToString())
    desc = pool.FindMessageTypeByName("paddock_client.rpc.Status")
    if hasattr(message_factory, "GetMessageClass"):  # protobuf 4.22 and later
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


_Status = _status_type()


def _status_details(status: bytes) -> Iterable[tuple[str, bytes]]:
    """The (type URL, value) of each detail of a google.rpc.Status."""
    for detail in _Status.FromString(status).details:
        yield detail.type_url, detail.value


Command = Union[Sequence[str], "Cmd"]


@dataclasses.dataclass
class Cmd:
    """A command: its program and arguments, environment and directory."""

    argv: Sequence[str]
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    dir: str = ""


def _cmd(c: Command) -> pb.Cmd:
    if not isinstance(c, Cmd):
        c = Cmd(argv=list(c))
    if not c.argv:
        raise PaddockError("invalid", "a command needs a program", grpc.StatusCode.INVALID_ARGUMENT)
    return pb.Cmd(
        path=c.argv[0],
        args=list(c.argv[1:]),
        env=[pb.EnvVar(name=k, value=v) for k, v in c.env.items()],
        dir=c.dir,
    )


@dataclasses.dataclass
class ExecResult:
    """A finished command's output and exit code."""

    stdout: bytes
    stderr: bytes
    exit_code: int


@dataclasses.dataclass
class Frame:
    """One frame of a command: output ("stdout", "stderr" with data), or its
    one terminal frame ("exit" with code, or "error" with error: the
    command's end is unknown)."""

    kind: str
    data: bytes = b""
    code: int = 0
    error: PaddockError | None = None


class Client:
    """A client of one paddockd. target is its address ("127.0.0.1:8423",
    an http:// or https:// URL); token a bearer token of its tokens file
    (required beyond loopback); credentials, for TLS, as grpc makes them
    (https:// alone uses the system's roots)."""

    def __init__(self, target: str, token: str | None = None, *, credentials: grpc.ChannelCredentials | None = None):
        secure = credentials is not None or target.startswith("https://")
        target = target.removeprefix("http://").removeprefix("https://").rstrip("/")
        options = [("grpc.max_receive_message_length", 16 << 20)]
        if secure:
            self._channel = grpc.aio.secure_channel(target, credentials or grpc.ssl_channel_credentials(), options=options)
        else:
            self._channel = grpc.aio.insecure_channel(target, options=options)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()

    def __repr__(self) -> str:  # never the token
        return "paddock_client.Client()"

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Ends the connection and every stream still open on it (a
        detachable command goes on; another ends)."""
        await self._channel.close()

    async def call(self, method: str, request, reply_type):
        """Runs the unary RPC method; its failure is a PaddockError."""
        rpc = self._channel.unary_unary(
            _SERVICE + method, request_serializer=type(request).SerializeToString, response_deserializer=reply_type.FromString
        )
        try:
            return await rpc(request, metadata=self._metadata)
        except grpc.aio.AioRpcError as err:
            raise PaddockError.from_rpc(err) from None

    def stream(self, method: str, request, item_type) -> grpc.aio.UnaryStreamCall:
        """Opens the server stream method."""
        rpc = self._channel.unary_stream(
            _SERVICE + method, request_serializer=type(request).SerializeToString, response_deserializer=item_type.FromString
        )
        return rpc(request, metadata=self._metadata)

    def upload(self, method: str, requests: AsyncIterator, request_type, reply_type):
        """Opens the client stream method with requests."""
        rpc = self._channel.stream_unary(
            _SERVICE + method, request_serializer=request_type.SerializeToString, response_deserializer=reply_type.FromString
        )
        return rpc(requests, metadata=self._metadata)

    async def create(self, provider: str, name: str, params: Mapping[str, str] | None = None) -> "Sandbox":
        """Makes (or adopts) the sandbox name on provider."""
        r = await self.call("Create", pb.CreateRequest(provider=provider, name=name, params=dict(params or {})), pb.CreateReply)
        return Sandbox(self, r.handle)

    async def create_new(self, provider: str, name: str) -> "Sandbox":
        """Makes the sandbox name on provider, or fails already_exists."""
        r = await self.call("CreateNew", pb.CreateNewRequest(provider=provider, name=name), pb.CreateNewReply)
        return Sandbox(self, r.handle)

    def sandbox(self, provider: str, name: str) -> "Sandbox":
        """The sandbox name on provider, not checked (Sandbox.info checks)."""
        return Sandbox(self, pb.Handle(provider=provider, name=name))

    async def list(self, provider: str) -> list[str]:
        """The names of provider's sandboxes."""
        return list((await self.call("List", pb.ListRequest(provider=provider), pb.ListReply)).names)

    async def capabilities(self, provider: str) -> list[str]:
        """What provider offers."""
        r = await self.call("Capabilities", pb.CapabilitiesRequest(provider=provider), pb.CapabilitiesReply)
        return list(r.capabilities)


class Sandbox:
    """One sandbox of one provider."""

    def __init__(self, client: Client, handle: pb.Handle):
        self.client = client
        self.handle = handle
        self.files = Files(self)

    @property
    def name(self) -> str:
        return self.handle.name

    async def info(self) -> pb.Info:
        return (await self.client.call("Get", pb.GetRequest(handle=self.handle), pb.GetReply)).info

    async def destroy(self) -> None:
        await self.client.call("Destroy", pb.DestroyRequest(handle=self.handle), pb.DestroyReply)

    async def exec(
        self, cmd: Command, *, timeout: float | None = None, max_output: int = 0, stderr_to_stdout: bool = False
    ) -> ExecResult:
        """Runs cmd to its end: its output and exit code (a non-zero exit is
        a result, not an error). timeout in seconds (None: the provider's
        default); max_output bytes kept (0: the default cap; more fails
        truncated)."""
        q = pb.ExecRequest(handle=self.handle, cmd=_cmd(cmd), max_output=max_output, stderr_to_stdout=stderr_to_stdout)
        if timeout is not None:
            q.timeout.FromNanoseconds(int(timeout * 1e9))
        r = await self.client.call("Exec", q, pb.ExecReply)
        return ExecResult(stdout=r.stdout, stderr=r.stderr, exit_code=r.exit_code)

    async def spawn(
        self,
        cmd: Command,
        *,
        stdin: bool = False,
        tty: bool = False,
        detachable: bool = False,
        session_name: str = "",
        size: tuple[int, int] | None = None,
    ) -> "Process":
        """Starts cmd; its frames come from the returned Process as they are
        written. A detachable command outlives its stream: attach reaches it
        by its session. size is a TTY's (columns, rows)."""
        q = pb.SpawnRequest(
            handle=self.handle, cmd=_cmd(cmd), stdin=stdin, tty=tty, detachable=detachable, session_name=session_name
        )
        if size is not None:
            q.size.cols, q.size.rows = size
        return await Process.open(self, self.client.stream("Spawn", q, svc.StreamItem), "spawn")

    async def attach(self, session_id: str, *, stdin: bool = False, skip_stdout: int = 0, skip_stderr: int = 0) -> "Process":
        """Joins the detached session session_id: what it wrote since it
        started (less the skipped output frames), then what it writes."""
        q = pb.AttachRequest(
            handle=self.handle, session_id=session_id, stdin=stdin, skip_stdout=skip_stdout, skip_stderr=skip_stderr
        )
        return await Process.open(self, self.client.stream("Attach", q, svc.StreamItem), "attach")

    async def sessions(self) -> list[pb.Session]:
        r = await self.client.call("ListSessions", pb.ListSessionsRequest(handle=self.handle), pb.ListSessionsReply)
        return list(r.sessions)

    async def terminate_session(self, session_id: str, *, force: bool = False) -> None:
        mode = pb.TERMINATE_MODE_FORCE if force else pb.TERMINATE_MODE_GRACEFUL
        q = pb.TerminateSessionRequest(handle=self.handle, session_id=session_id, mode=mode)
        await self.client.call("TerminateSession", q, pb.TerminateSessionReply)


class Process:
    """A spawned or attached command: an async iterator of its frames, the
    terminal one last, and its controls while its stream is open. A stream
    that ends without a terminal frame raises unavailable, never an exit."""

    def __init__(self, sandbox: Sandbox, call: grpc.aio.UnaryStreamCall, command: pb.CommandRef, session_id: str):
        self._sandbox = sandbox
        self._call = call
        self._pending: list[Frame] = []
        self._ended = False
        self.command = command
        self.session_id = session_id

    @classmethod
    async def open(cls, sandbox: Sandbox, call: grpc.aio.UnaryStreamCall, op: str) -> "Process":
        first = await _read(call)
        which = None if first is None else first.WhichOneof("item")
        if which not in ("spawn", "attach"):
            call.cancel()
            raise PaddockError("unavailable", f"{op}: the stream ended before its reply", grpc.StatusCode.UNAVAILABLE)
        reply = getattr(first, which)
        return cls(sandbox, call, reply.command, getattr(reply, "session_id", ""))

    def __aiter__(self) -> "Process":
        return self

    async def __anext__(self) -> Frame:
        while not self._pending:
            if self._ended:
                raise StopAsyncIteration
            item = await _read(self._call)
            if item is None:
                self._ended = True
                raise PaddockError(
                    "unavailable", "closed_before_exit: the stream ended without the command's exit", grpc.StatusCode.UNAVAILABLE
                )
            if item.WhichOneof("item") == "frames":
                self._pending.extend(_frame(f) for f in item.frames.frames)
        f = self._pending.pop(0)
        if f.kind in ("exit", "error"):
            self._ended, self._pending = True, []
        return f

    async def wait(self) -> ExecResult:
        """Collects the command's output to its end: its exit code, or the
        error frame's error raised."""
        out, err = [], []
        async for f in self:
            if f.kind == "stdout":
                out.append(f.data)
            elif f.kind == "stderr":
                err.append(f.data)
            elif f.kind == "exit":
                return ExecResult(stdout=b"".join(out), stderr=b"".join(err), exit_code=f.code)
            else:
                raise f.error
        raise PaddockError("unavailable", "closed_before_exit", grpc.StatusCode.UNAVAILABLE)

    async def write(self, data: Union[bytes, str]) -> None:
        if isinstance(data, str):
            data = data.encode()
        await self._control("WriteStdin", pb.WriteStdinRequest(command=self.command, data=data), pb.WriteStdinReply)

    async def close_stdin(self) -> None:
        await self._control("CloseStdin", pb.CloseStdinRequest(command=self.command), pb.CloseStdinReply)

    async def signal(self, name: str) -> None:
        """Sends a signal by name ("INT", "TERM", "KILL", ...)."""
        await self._control("Signal", pb.SignalRequest(command=self.command, signal=name), pb.SignalReply)

    async def resize(self, cols: int, rows: int) -> None:
        q = pb.ResizeRequest(command=self.command, size=pb.TermSize(cols=cols, rows=rows))
        await self._control("Resize", q, pb.ResizeReply)

    async def stop(self) -> None:
        """Ends the command."""
        await self._control("StopCommand", pb.StopCommandRequest(command=self.command), pb.StopCommandReply)

    def detach(self) -> None:
        """Leaves the command running (a detachable one stays attachable by
        its session) and ends this stream."""
        self._ended = True
        self._call.cancel()

    async def _control(self, method: str, request, reply_type) -> None:
        await self._sandbox.client.call(method, request, reply_type)


async def _read(call: grpc.aio.UnaryStreamCall):
    """The stream's next message, None at its end; a failure raises."""
    try:
        item = await call.read()
    except grpc.aio.AioRpcError as err:
        raise PaddockError.from_rpc(err) from None
    return None if item is grpc.aio.EOF else item


def _frame(f) -> Frame:
    which = f.WhichOneof("frame")
    if which in ("stdout", "stderr"):
        return Frame(kind=which, data=getattr(f, which).data)
    if which == "exit":
        return Frame(kind="exit", code=f.exit.code)
    if which == "error":
        e = f.error
        return Frame(kind="error", error=PaddockError(kind_name(e.kind), f"{e.reason}: {e.detail}"))
    return Frame(kind=which or "unknown")


_WRITE_CHUNK = 256 * 1024


class Files:
    """A sandbox's files."""

    def __init__(self, sandbox: Sandbox):
        self._sandbox = sandbox

    @property
    def _handle(self) -> pb.Handle:
        return self._sandbox.handle

    async def write(self, path: str, data: Union[bytes, str, AsyncIterable[bytes]], mode: int = 0o644) -> None:
        """Stores data at path (mode: permission bits); a write that does not
        finish leaves the file as it was."""
        if isinstance(data, str):
            data = data.encode()

        async def chunks():
            yield svc.WriteFileChunk(request=pb.WriteFileRequest(handle=self._handle, path=path, mode=mode))
            if isinstance(data, (bytes, bytearray, memoryview)):
                view = memoryview(data)
                for i in range(0, len(view), _WRITE_CHUNK):
                    yield svc.WriteFileChunk(data=bytes(view[i : i + _WRITE_CHUNK]))
            else:
                async for b in data:
                    yield svc.WriteFileChunk(data=b)
            yield svc.WriteFileChunk(end=True)

        try:
            await self._sandbox.client.upload("WriteFile", chunks(), svc.WriteFileChunk, pb.WriteFileReply)
        except grpc.aio.AioRpcError as err:
            raise PaddockError.from_rpc(err) from None

    async def stream(self, path: str) -> AsyncIterator[bytes]:
        """The file's bytes as they come."""
        call = self._sandbox.client.stream("ReadFile", pb.ReadFileRequest(handle=self._handle, path=path), svc.ReadFileChunk)
        try:
            while (item := await _read(call)) is not None:
                if item.WhichOneof("item") == "data":
                    yield item.data
        finally:
            call.cancel()

    async def read(self, path: str) -> bytes:
        """The file's whole content."""
        return b"".join([b async for b in self.stream(path)])

    async def list(self, path: str) -> list[pb.FileInfo]:
        r = await self._sandbox.client.call("ListDir", pb.ListDirRequest(handle=self._handle, path=path), pb.ListDirReply)
        return list(r.entries)

    async def stat(self, path: str) -> pb.FileInfo:
        return (await self._sandbox.client.call("Stat", pb.StatRequest(handle=self._handle, path=path), pb.StatReply)).info

    async def remove(self, path: str, *, recursive: bool = False) -> None:
        q = pb.RemoveRequest(handle=self._handle, path=path, recursive=recursive)
        await self._sandbox.client.call("Remove", q, pb.RemoveReply)

    async def rename(self, src: str, dst: str) -> None:
        q = pb.RenameRequest(handle=self._handle, to=dst)
        setattr(q, "from", src)  # "from" is a keyword in Python
        await self._sandbox.client.call("Rename", q, pb.RenameReply)

    async def mkdir(self, path: str, *, parents: bool = False, mode: int = 0) -> None:
        q = pb.MakeDirRequest(handle=self._handle, path=path, parents=parents, mode=mode)
        await self._sandbox.client.call("MakeDir", q, pb.MakeDirReply)
