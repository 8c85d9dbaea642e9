# The code interpreter's worker for daytonatest: one Python process per
# context, its globals kept from one execution to the next. It reads one
# JSON command per line on stdin ({"id", "code", "envs"}) and answers JSON
# chunks, one per line, on stdout: "stdout" and "stderr" text (sent at each
# newline or every 1024 characters), an "error" (name, value, and a
# traceback of the user's code only), then a "control" chunk, "completed",
# or "interrupted" when SIGINT stopped the code.
import io
import json
import os
import signal
import sys
import traceback

OUT = sys.__stdout__


def send(chunk):
    OUT.write(json.dumps(chunk) + "\n")
    OUT.flush()


class Stream(io.TextIOBase):
    def __init__(self, kind):
        self.kind = kind
        self.pending = []
        self.size = 0

    def writable(self):
        return True

    def write(self, text):
        if not text:
            return 0
        text = str(text)
        self.pending.append(text)
        self.size += len(text)
        if "\n" in text or self.size >= 1024:
            self.flush()
        return len(text)

    def flush(self):
        if self.pending:
            text = "".join(self.pending)
            self.pending, self.size = [], 0
            send({"type": self.kind, "text": text})


def interrupted(_signum, _frame):
    raise KeyboardInterrupt("Execution interrupted")


def user_traceback(err):
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == "<string>"]
    last = "%s: %s\n" % (type(err).__name__, err)
    if not frames:
        return last
    lines = ["Traceback (most recent call last):\n"]
    for f in frames:
        lines.append('  File "<stdin>", line %d\n' % f.lineno)
        if f.line:
            lines.append("    %s\n" % f.line)
    return "".join(lines) + last


def run(code, envs, scope):
    saved = {}
    for key, value in (envs or {}).items():
        key = str(key)
        saved[key] = os.environ.get(key)
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = str(value)
    out, err = Stream("stdout"), Stream("stderr")
    state, failure = "completed", None
    sys.stdout, sys.stderr = out, err
    try:
        exec(compile(code, "<string>", "exec"), scope)
    except KeyboardInterrupt:
        state = "interrupted"
    except SystemExit:
        pass
    except Exception as e:  # the code's own failure: an error chunk
        failure = {"type": "error", "name": type(e).__name__, "value": str(e), "traceback": user_traceback(e)}
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        out.flush()
        err.flush()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    if failure:
        send(failure)
    send({"type": "control", "text": state})


def main():
    signal.signal(signal.SIGINT, interrupted)
    scope = {"__name__": "__main__", "__doc__": None, "__package__": None, "__builtins__": __builtins__}
    while True:
        try:
            line = sys.stdin.readline()
            if not line:
                return
            if not line.strip():
                continue
            try:
                command = json.loads(line)
                envs = command.get("envs")
                if envs is not None and not isinstance(envs, dict):
                    raise ValueError("envs must be an object")
                run(command.get("code", ""), envs, scope)
            except Exception as e:
                send({"type": "error", "name": type(e).__name__, "value": str(e), "traceback": ""})
        except KeyboardInterrupt:
            continue


main()
