// Paddock's TypeScript client: sandboxes on every provider paddockd serves
// (local, docker, Sprites, E2B, Daytona, the fake), through paddockd's
// Connect service (messages/service.proto). A Sandbox runs commands (exec
// for the whole result, spawn for its frames as they come), attaches to
// detached sessions and reads and writes files; every failure is a
// PaddockError naming the taxonomy's kind.

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { Paddock as Service, type StreamItem, type WriteFileChunkSchema } from "./gen/service_pb.js";
import {
  CmdSchema,
  ErrorKind,
  FailureSchema,
  TerminateMode,
  type CommandRef,
  type Failure,
  type FileInfo,
  type Handle,
  type Info,
  type Session,
} from "./gen/messages_pb.js";

export { ErrorKind } from "./gen/messages_pb.js";
export type { FileInfo, Handle, Info, Session } from "./gen/messages_pb.js";

/** The kinds of the taxonomy, as the client names them ("not_found", ...),
 * and "unauthenticated" for a request paddockd did not accept. */
export type Kind = string;

/** kindName is the client's name of an ErrorKind: NOT_FOUND is "not_found". */
export function kindName(k: ErrorKind): Kind {
  return (ErrorKind[k] ?? "OTHER").toLowerCase();
}

/** PaddockError is every failure of the client: its kind, the detail paddockd
 * gave, the Connect code it came with and, where paddockd sent one, the
 * Failure itself (status, retry hint, provider, operation). */
export class PaddockError extends Error {
  constructor(
    readonly kind: Kind,
    readonly detail: string,
    readonly code: Code,
    readonly failure?: Failure,
    options?: { cause?: unknown },
  ) {
    super(detail ? `paddock: ${kind}: ${detail}` : `paddock: ${kind}`, options);
    this.name = "PaddockError";
  }

  /** from reads a thrown value as a PaddockError: the Failure a Connect
   * error carries, else its code's kind. */
  static from(err: unknown): PaddockError {
    if (err instanceof PaddockError) return err;
    const ce = ConnectError.from(err);
    const [failure] = ce.findDetails(FailureSchema);
    if (failure) return new PaddockError(kindName(failure.kind), failure.detail, ce.code, failure, { cause: err });
    return new PaddockError(codeKinds[ce.code] ?? "other", ce.rawMessage, ce.code, undefined, { cause: err });
  }
}

// codeKinds name a failure that carries no Failure (it never reached the
// runtime: auth, transport, a malformed request) by its code.
const codeKinds: Partial<Record<Code, Kind>> = {
  [Code.Unauthenticated]: "unauthenticated",
  [Code.PermissionDenied]: "denied",
  [Code.InvalidArgument]: "invalid",
  [Code.NotFound]: "not_found",
  [Code.Unavailable]: "unavailable",
  [Code.DeadlineExceeded]: "unavailable",
  [Code.Canceled]: "unavailable",
  [Code.ResourceExhausted]: "rate_limited",
  [Code.Unimplemented]: "not_supported",
};

/** call runs one RPC, its failure a PaddockError. */
async function call<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    throw PaddockError.from(err);
  }
}

/** Options of a client. */
export interface ClientOptions {
  /** paddockd's address, as "http://127.0.0.1:8423" (loopback) or "https://...". */
  baseUrl: string;
  /** A bearer token of paddockd's tokens file (required beyond loopback). */
  token?: string;
  /** Another transport (gRPC, gRPC-Web, TLS options); baseUrl and token are then unused. */
  transport?: Transport;
}

/** A command: its program and arguments, and optionally its environment and directory. */
export type Command = string[] | { argv: string[]; env?: Record<string, string>; dir?: string };

function cmdOf(c: Command): MessageInitShape<typeof CmdSchema> {
  const { argv, env, dir } = Array.isArray(c) ? { argv: c, env: undefined, dir: undefined } : c;
  if (argv.length === 0) throw new PaddockError("invalid", "a command needs a program", Code.InvalidArgument);
  return create(CmdSchema, {
    path: argv[0],
    args: argv.slice(1),
    env: Object.entries(env ?? {}).map(([name, value]) => ({ name, value })),
    dir: dir ?? "",
  });
}

/** PaddockClient speaks to one paddockd. */
export class PaddockClient {
  readonly rpc: Client<typeof Service>;
  private readonly session?: Http2SessionManager;

  constructor(opts: ClientOptions) {
    const interceptors: Interceptor[] = [];
    const token = opts.token;
    if (token) {
      interceptors.push((next) => (req) => {
        req.header.set("Authorization", `Bearer ${token}`);
        return next(req);
      });
    }
    let transport = opts.transport;
    if (!transport) {
      // HTTP/2: writeFile is a client stream, which HTTP/1.1 cannot carry.
      this.session = new Http2SessionManager(opts.baseUrl);
      transport = createConnectTransport({ baseUrl: opts.baseUrl, httpVersion: "2", interceptors, sessionManager: this.session });
    }
    this.rpc = createClient(Service, transport);
  }

  /** close ends the client's connection and every stream still open on it
   * (a detachable command goes on; another ends). */
  close(): void {
    this.session?.abort();
  }

  /** create makes (or adopts) the sandbox name on provider. */
  async create(provider: string, name: string, params: Record<string, string> = {}): Promise<Sandbox> {
    const r = await call(() => this.rpc.create({ provider, name, params }));
    return new Sandbox(this, r.handle!);
  }

  /** createNew makes the sandbox name on provider, or fails already_exists. */
  async createNew(provider: string, name: string): Promise<Sandbox> {
    const r = await call(() => this.rpc.createNew({ provider, name }));
    return new Sandbox(this, r.handle!);
  }

  /** sandbox is the sandbox name on provider, not checked (Sandbox.info checks). */
  sandbox(provider: string, name: string): Sandbox {
    return new Sandbox(this, { provider, name, instanceId: "" } as Handle);
  }

  /** list names the sandboxes of provider. */
  async list(provider: string): Promise<string[]> {
    return (await call(() => this.rpc.list({ provider }))).names;
  }

  /** capabilities names what provider offers. */
  async capabilities(provider: string): Promise<string[]> {
    return (await call(() => this.rpc.capabilities({ provider }))).capabilities;
  }
}

/** ExecResult is a finished command's output and exit code. */
export interface ExecResult {
  stdout: Uint8Array;
  stderr: Uint8Array;
  exitCode: number;
}

/** Options of Sandbox.exec. */
export interface ExecOptions {
  /** Seconds before the command is stopped; absent: the provider's default. */
  timeoutSeconds?: number;
  /** Bytes of output kept; more fails truncated. 0: the default cap. */
  maxOutput?: number;
  stderrToStdout?: boolean;
}

/** Options of Sandbox.spawn. */
export interface SpawnOptions {
  stdin?: boolean;
  tty?: boolean;
  /** The command outlives its stream: Sandbox.attach reaches it by its session. */
  detachable?: boolean;
  sessionName?: string;
  size?: { cols: number; rows: number };
}

/** Sandbox is one sandbox of one provider. */
export class Sandbox {
  readonly files: Files;

  constructor(
    readonly client: PaddockClient,
    readonly handle: Handle,
  ) {
    this.files = new Files(this);
  }

  private get rpc() {
    return this.client.rpc;
  }

  async info(): Promise<Info> {
    return (await call(() => this.rpc.get({ handle: this.handle }))).info!;
  }

  async destroy(): Promise<void> {
    await call(() => this.rpc.destroy({ handle: this.handle }));
  }

  /** exec runs cmd to its end: its output and exit code (a non-zero exit is a result, not an error). */
  async exec(cmd: Command, opts: ExecOptions = {}): Promise<ExecResult> {
    const r = await call(() =>
      this.rpc.exec({
        handle: this.handle,
        cmd: cmdOf(cmd),
        timeout: opts.timeoutSeconds === undefined ? undefined : durationOf(opts.timeoutSeconds),
        maxOutput: BigInt(opts.maxOutput ?? 0),
        stderrToStdout: opts.stderrToStdout ?? false,
      }),
    );
    return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode };
  }

  /** spawn starts cmd; its frames come from the returned Process as they are written. */
  async spawn(cmd: Command, opts: SpawnOptions = {}): Promise<Process> {
    const abort = new AbortController();
    const items = this.rpc.spawn(
      {
        handle: this.handle,
        cmd: cmdOf(cmd),
        stdin: opts.stdin ?? false,
        tty: opts.tty ?? false,
        detachable: opts.detachable ?? false,
        sessionName: opts.sessionName ?? "",
        size: opts.size,
      },
      { signal: abort.signal },
    );
    return Process.open(this, items, abort, "spawn");
  }

  /** attach joins the detached session sessionId: what it wrote since it
   * started (less skip), then what it writes. */
  async attach(sessionId: string, opts: { stdin?: boolean; skipStdout?: number; skipStderr?: number } = {}): Promise<Process> {
    const abort = new AbortController();
    const items = this.rpc.attach(
      {
        handle: this.handle,
        sessionId,
        stdin: opts.stdin ?? false,
        skipStdout: BigInt(opts.skipStdout ?? 0),
        skipStderr: BigInt(opts.skipStderr ?? 0),
      },
      { signal: abort.signal },
    );
    return Process.open(this, items, abort, "attach");
  }

  async sessions(): Promise<Session[]> {
    return (await call(() => this.rpc.listSessions({ handle: this.handle }))).sessions;
  }

  async terminateSession(sessionId: string, force = false): Promise<void> {
    await call(() =>
      this.rpc.terminateSession({
        handle: this.handle,
        sessionId,
        mode: force ? TerminateMode.FORCE : TerminateMode.GRACEFUL,
      }),
    );
  }
}

/** Frame is one frame of a command: output, or its one terminal frame
 * (exit, or error: the command's end is unknown). */
export type Frame =
  | { kind: "stdout"; data: Uint8Array }
  | { kind: "stderr"; data: Uint8Array }
  | { kind: "exit"; code: number }
  | { kind: "error"; reason: string; error: PaddockError };

/** Process is a spawned or attached command: an async iterator of its
 * frames, the terminal one last, and its controls while its stream is open. */
export class Process implements AsyncIterable<Frame> {
  private constructor(
    private readonly sandbox: Sandbox,
    private readonly items: AsyncIterator<StreamItem>,
    private readonly abort: AbortController,
    readonly command: CommandRef,
    readonly sessionId: string,
  ) {}

  static async open(sandbox: Sandbox, stream: AsyncIterable<StreamItem>, abort: AbortController, op: string): Promise<Process> {
    const items = stream[Symbol.asyncIterator]();
    const first = await call(() => items.next());
    const item = first.done ? undefined : first.value.item;
    if (item?.case !== "spawn" && item?.case !== "attach") {
      abort.abort();
      throw new PaddockError("unavailable", `${op}: the stream ended before its reply`, Code.Unavailable);
    }
    const sessionId = item.case === "spawn" ? item.value.sessionId : "";
    return new Process(sandbox, items, abort, item.value.command!, sessionId);
  }

  /** frames yields the command's frames; a stream that ends without a
   * terminal frame throws unavailable (closed_before_exit), never an exit. */
  async *[Symbol.asyncIterator](): AsyncIterator<Frame> {
    for (;;) {
      const next = await call(() => this.items.next());
      if (next.done) {
        throw new PaddockError("unavailable", "closed_before_exit: the stream ended without the command's exit", Code.Unavailable);
      }
      if (next.value.item.case !== "frames") continue;
      for (const f of next.value.item.value.frames) {
        switch (f.frame.case) {
          case "stdout":
          case "stderr":
            yield { kind: f.frame.case, data: f.frame.value.data };
            break;
          case "exit":
            yield { kind: "exit", code: f.frame.value.code };
            return;
          case "error": {
            const e = f.frame.value;
            yield { kind: "error", reason: e.reason, error: new PaddockError(kindName(e.kind), `${e.reason}: ${e.detail}`, Code.Unknown) };
            return;
          }
        }
      }
    }
  }

  /** wait collects the command's output to its end: its exit code, or the error frame's error thrown. */
  async wait(): Promise<ExecResult> {
    const stdout: Uint8Array[] = [];
    const stderr: Uint8Array[] = [];
    for await (const f of this) {
      if (f.kind === "stdout") stdout.push(f.data);
      else if (f.kind === "stderr") stderr.push(f.data);
      else if (f.kind === "exit") return { stdout: concat(stdout), stderr: concat(stderr), exitCode: f.code };
      else throw f.error;
    }
    throw new PaddockError("unavailable", "closed_before_exit", Code.Unavailable);
  }

  async write(data: Uint8Array | string): Promise<void> {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    await call(() => this.rpc.writeStdin({ command: this.command, data: bytes }));
  }

  async closeStdin(): Promise<void> {
    await call(() => this.rpc.closeStdin({ command: this.command }));
  }

  /** signal sends a signal by name ("INT", "TERM", "KILL", ...). */
  async signal(name: string): Promise<void> {
    await call(() => this.rpc.signal({ command: this.command, signal: name }));
  }

  async resize(cols: number, rows: number): Promise<void> {
    await call(() => this.rpc.resize({ command: this.command, size: { cols, rows } }));
  }

  /** stop ends the command. */
  async stop(): Promise<void> {
    await call(() => this.rpc.stopCommand({ command: this.command }));
  }

  /** detach leaves the command running (a detachable one stays attachable by
   * its session) and ends this stream. */
  detach(): void {
    this.abort.abort();
  }

  private get rpc() {
    return this.sandbox.client.rpc;
  }
}

/** writeChunk bounds the bytes of one WriteFile message. */
const writeChunk = 256 * 1024;

/** Files are a sandbox's files. */
export class Files {
  constructor(private readonly sandbox: Sandbox) {}

  private get rpc() {
    return this.sandbox.client.rpc;
  }

  /** write stores data at path (mode: permission bits, default 0644); a
   * write that does not finish leaves the file as it was. */
  async write(path: string, data: Uint8Array | string | AsyncIterable<Uint8Array>, mode = 0o644): Promise<void> {
    const handle = this.sandbox.handle;
    async function* chunks(): AsyncGenerator<MessageInitShape<typeof WriteFileChunkSchema>> {
      yield { item: { case: "request", value: { handle, path, mode } } };
      if (typeof data === "string" || data instanceof Uint8Array) {
        const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
        for (let i = 0; i < bytes.length; i += writeChunk) {
          yield { item: { case: "data", value: bytes.subarray(i, i + writeChunk) } };
        }
      } else {
        for await (const b of data) yield { item: { case: "data", value: b } };
      }
      yield { item: { case: "end", value: true } };
    }
    await call(() => this.rpc.writeFile(chunks()));
  }

  /** stream yields the file's bytes as they come. */
  async *stream(path: string): AsyncGenerator<Uint8Array> {
    const items = this.rpc.readFile({ handle: this.sandbox.handle, path })[Symbol.asyncIterator]();
    for (;;) {
      const next = await call(() => items.next());
      if (next.done) return;
      if (next.value.item.case === "data") yield next.value.item.value;
    }
  }

  /** read is the file's whole content. */
  async read(path: string): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for await (const b of this.stream(path)) parts.push(b);
    return concat(parts);
  }

  async list(path: string): Promise<FileInfo[]> {
    return (await call(() => this.rpc.listDir({ handle: this.sandbox.handle, path }))).entries;
  }

  async stat(path: string): Promise<FileInfo> {
    return (await call(() => this.rpc.stat({ handle: this.sandbox.handle, path }))).info!;
  }

  async remove(path: string, opts: { recursive?: boolean } = {}): Promise<void> {
    await call(() => this.rpc.remove({ handle: this.sandbox.handle, path, recursive: opts.recursive ?? false }));
  }

  async rename(from: string, to: string): Promise<void> {
    await call(() => this.rpc.rename({ handle: this.sandbox.handle, from, to }));
  }

  async mkdir(path: string, opts: { parents?: boolean; mode?: number } = {}): Promise<void> {
    await call(() =>
      this.rpc.makeDir({ handle: this.sandbox.handle, path, parents: opts.parents ?? false, mode: opts.mode ?? 0 }),
    );
  }
}

/** durationOf is seconds as a protobuf Duration (whole seconds and nanoseconds). */
function durationOf(seconds: number) {
  const whole = Math.floor(seconds);
  return { seconds: BigInt(whole), nanos: Math.round((seconds - whole) * 1e9) };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
