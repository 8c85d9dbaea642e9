package fake

import (
	"bytes"
	"context"
	"io"
	"io/fs"

	"github.com/paddockhq/paddock"
)

// WriteFile stores everything r yields at path; parents need no creating.
func (a *Adapter) WriteFile(_ context.Context, h paddock.Handle, path string, mode fs.FileMode, r io.Reader) error {
	if err := paddock.ValidatePath(path); err != nil {
		return err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return &paddock.UnavailableError{Detail: "reading the caller's data: " + err.Error()}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	sb, err := a.lookup(h.Name)
	if err != nil {
		return err
	}
	sb.files[path] = file{data: data, mode: uint32(mode.Perm())}
	return nil
}

// ReadFile streams a copy of the stored bytes; ErrNotFound for an absent
// sandbox or file.
func (a *Adapter) ReadFile(_ context.Context, h paddock.Handle, path string) (io.ReadCloser, error) {
	if err := paddock.ValidatePath(path); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	sb, err := a.lookup(h.Name)
	if err != nil {
		return nil, err
	}
	f, ok := sb.files[path]
	if !ok {
		return nil, paddock.ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(bytes.Clone(f.data))), nil
}
