package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock"
)

// WriteFile streams r into path (as the sandbox user), creating parent
// directories, then sets mode. The bytes go to a staging file beside
// path, renamed over it only once every byte sent is there, so a failure
// leaves path as it was. Only the scratch mounts are writable: a path
// elsewhere is invalid, with the sandbox's reason.
func (a *Adapter) WriteFile(ctx context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	if err := paddock.ValidatePath(path); err != nil {
		return err
	}
	staging := paddock.StagingPath(path)
	src := paddock.NewWriteSource(r)
	out, err := a.run(ctx, h.Name, execSpec{cmd: sh(scriptStageFile, path, staging)}, src)
	if err != nil {
		a.discard(h, staging)
		return err // the copy of r may still be reading: its failure is not read here
	}
	defer a.touch(h)
	held, _ := strconv.ParseInt(strings.TrimSpace(string(out.stdout)), 10, 64)
	switch {
	case out.code != 0 && src.Failure(nil) == nil:
		return &paddock.InvalidError{Detail: paddock.DetailPath + ": " + short(string(out.stderr))}
	case out.code != 0 || out.fed != nil || held != out.stdin:
		a.discard(h, staging)
		return src.Failure(&paddock.UnavailableError{Detail: fmt.Sprintf("write: %d of the bytes sent reached the sandbox", held)})
	}
	out, err = a.run(ctx, h.Name, execSpec{cmd: sh(scriptCommitFile, path, "0"+strconv.FormatUint(uint64(paddock.FilePerm(mode)), 8), staging)}, nil)
	if err != nil {
		a.discard(h, staging)
		return err
	}
	if out.code != 0 {
		return &paddock.InvalidError{Detail: paddock.DetailPath + ": " + short(string(out.stderr))}
	}
	return nil
}

// discard removes a staged file after a write that failed, on its own
// bounded context (the write's may be what ended).
func (a *Adapter) discard(h paddock.Handle, staging string) {
	ctx, cancel := context.WithTimeout(context.Background(), paddock.StagingCleanupTimeout)
	defer cancel()
	if _, err := a.run(ctx, h.Name, execSpec{cmd: sh(scriptDiscard, staging)}, nil); err != nil {
		a.log.Debug().Str("sandbox", h.Name).Str("error", err.Error()).Msg("docker: removing a staged file")
	}
}

// ReadFile streams the regular file at path; a missing one is not_found.
// A read that fails midway is an error from Read, never a short file.
func (a *Adapter) ReadFile(ctx context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	if err := paddock.ValidatePath(path); err != nil {
		return nil, err
	}
	x, err := a.startExec(ctx, h.Name, execSpec{cmd: sh(scriptReadFile, path)})
	if err != nil {
		return nil, err
	}
	f := &fileReader{a: a, sandbox: h.Name, x: x, buf: make([]byte, 32<<10)}
	// Wait for the first bytes or the end, so absence is an error here
	// rather than an empty file.
	stop := context.AfterFunc(ctx, x.close)
	f.fill()
	stopped := stop()
	if !stopped {
		x.close()
		return nil, ctxError(ctx)
	}
	if len(f.pending) == 0 && f.err != nil {
		x.close()
		if errors.Is(f.err, io.EOF) {
			return io.NopCloser(strings.NewReader("")), nil
		}
		return nil, f.err
	}
	a.touch(h)
	return f, nil
}

// fileReader is a file's bytes from a cat exec.
type fileReader struct {
	a       *Adapter
	sandbox string
	x       *attached
	buf     []byte
	pending []byte
	stderr  strings.Builder
	err     error // io.EOF after a clean end
}

// fill reads until some stdout or the end; at the end err is io.EOF for
// exit 0, not_found for a missing file, else the failure.
func (f *fileReader) fill() {
	for len(f.pending) == 0 && f.err == nil {
		stream, data, err := f.x.next(f.buf)
		switch stream {
		case muxStdout:
			f.pending = data
		case muxStderr, muxSystem:
			if f.stderr.Len() < 1024 {
				f.stderr.Write(data)
			}
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) {
			f.err = &paddock.UnavailableError{Detail: "docker: reading a file: the stream broke"}
			return
		}
		code, cerr := f.a.finished(f.sandbox, f.x.id)
		switch {
		case cerr != nil:
			f.err = cerr
		case code == 0:
			f.err = io.EOF
		case code == 3:
			f.err = paddock.ErrNotFound
		default:
			f.err = &paddock.InvalidError{Detail: paddock.DetailPath + ": " + short(f.stderr.String())}
		}
	}
}

func (f *fileReader) Read(p []byte) (int, error) {
	f.fill()
	if len(f.pending) == 0 {
		return 0, f.err
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// Close ends the read.
func (f *fileReader) Close() error {
	f.x.close()
	return nil
}
