package local

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/paddockhq/paddock"
)

var _ paddock.LeaseKeeper = (*Adapter)(nil)

// writeLease records lease in the sandbox's lease file; a zero lease
// leaves the file as it is.
func (a *Adapter) writeLease(name string, lease paddock.Lease) error {
	if lease.IsZero() {
		return nil
	}
	return writeJSON(filepath.Join(a.dirOf(name), leaseFile), lease, true)
}

// RenewLeases records lease on each named sandbox that exists; absent ones
// are skipped.
func (a *Adapter) RenewLeases(_ context.Context, names []string, lease paddock.Lease) error {
	var errs []error
	for _, name := range names {
		if _, err := a.readMeta(name); errors.Is(err, paddock.ErrNotFound) {
			continue
		}
		if err := a.writeLease(name, lease); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, unavailable("renewing the lease of "+name, err))
		}
	}
	return errors.Join(errs...)
}

// leased is one sandbox under the root with its lease (zero: none).
type leased struct {
	meta  meta
	lease paddock.Lease
}

// everyLease reads every sandbox's metadata and lease under the root;
// directories that are not sandboxes are skipped.
func (a *Adapter) everyLease() ([]leased, error) {
	entries, err := os.ReadDir(a.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable("listing the root", err)
	}
	var out []leased
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		var l leased
		b, err := os.ReadFile(filepath.Join(a.root, e.Name(), metaFile))
		if err != nil || json.Unmarshal(b, &l.meta) != nil || l.meta.Name == "" || a.dirOf(l.meta.Name) != filepath.Join(a.root, e.Name()) {
			continue // not a sandbox, or one being created or destroyed
		}
		if b, err := os.ReadFile(filepath.Join(a.root, e.Name(), leaseFile)); err == nil {
			_ = json.Unmarshal(b, &l.lease) // unreadable: not leased
		}
		out = append(out, l)
	}
	return out, nil
}

// SandboxFacts reads what a reap judges the sandboxes under the root by.
// Local sandboxes carry no idle timeout.
func (a *Adapter) SandboxFacts(context.Context) ([]paddock.SandboxFacts, error) {
	all, err := a.everyLease()
	if err != nil {
		return nil, err
	}
	facts := make([]paddock.SandboxFacts, 0, len(all))
	for _, l := range all {
		facts = append(facts, paddock.SandboxFacts{Name: l.meta.Name, Created: l.meta.CreatedAt, MaxAge: l.meta.MaxAge, Lease: l.lease})
	}
	return facts, nil
}

// Reclaim destroys a sandbox a reap judged (docs/contract.md#leases).
func (a *Adapter) Reclaim(ctx context.Context, f paddock.SandboxFacts) error {
	return a.Destroy(ctx, a.BuildHandle(f.Name))
}
