package local

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/stubproc"
)

var (
	_ paddock.CreateNewer  = (*Adapter)(nil)
	_ paddock.DestroyOncer = (*Adapter)(nil)
)

// A sandbox is a directory under the root:
//
//	<root>/<dir>/meta.json             name, instance id, creation time, egress, suspended
//	<root>/<dir>/lease.json            the lease: owner and end (absent: not leased)
//	<root>/<dir>/fs/                   its files, and its commands' default working directory
//	<root>/<dir>/sessions/<id>/        session.json and journal of each session
//
// <dir> is the name itself when it is a plain file name, else a hash of it.
const (
	metaFile    = "meta.json"
	leaseFile   = "lease.json"
	fsDir       = "fs"
	sessionsDir = "sessions"
	trashPrefix = ".trash-"
)

// Egress values of the "egress" creation parameter.
const (
	egressNone         = "none"         // loopback only (the default)
	egressUnrestricted = "unrestricted" // the host's network
)

// meta is a sandbox's metadata file.
type meta struct {
	Name       string    `json:"name"`
	InstanceID string    `json:"instance_id,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	Egress     string    `json:"egress"`
	Suspended  bool      `json:"suspended,omitempty"`
	// MaxAge bounds the sandbox's age (Reap); 0 = none.
	MaxAge time.Duration `json:"max_age,omitempty"`
	// Policy is the network policy last applied; nil = none (deny all).
	Policy *paddock.NetworkPolicy `json:"policy,omitempty"`
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$`)

// dirOf is the directory of sandbox name.
func (a *Adapter) dirOf(name string) string {
	if plainName.MatchString(name) {
		return filepath.Join(a.root, name)
	}
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(a.root, "h-"+hex.EncodeToString(sum[:16]))
}

// createParams reads the creation parameters: only "egress".
func createParams(opts paddock.CreateOpts) (egress string, err error) {
	egress = egressNone
	for k, v := range opts.Params {
		switch {
		case k == "egress" && (v == egressNone || v == egressUnrestricted):
			egress = v
		default:
			return "", &paddock.InvalidError{Detail: paddock.DetailCreateOptions + ": local takes only egress=none|unrestricted"}
		}
	}
	return egress, nil
}

// Create makes the sandbox directory, or adopts an existing one untouched.
// Parameter: egress=none (default: loopback only, under isolation) or
// egress=unrestricted (the host's network).
func (a *Adapter) Create(_ context.Context, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	if err := paddock.ValidateSandboxName(name); err != nil {
		return paddock.Handle{}, err
	}
	egress, err := createParams(opts)
	if err != nil {
		return paddock.Handle{}, err
	}
	dir := a.dirOf(name)
	if err := a.makeDirs(dir, false); err != nil && !errors.Is(err, fs.ErrExist) {
		return paddock.Handle{}, unavailable("create", err)
	}
	m := meta{Name: name, CreatedAt: time.Now().UTC(), Egress: egress, MaxAge: a.maxAge}
	if err := writeJSON(filepath.Join(dir, metaFile), m, false); err != nil && !errors.Is(err, fs.ErrExist) {
		return paddock.Handle{}, unavailable("create", err)
	}
	if err := a.writeLease(name, opts.Lease); err != nil {
		return paddock.Handle{}, unavailable("create", err)
	}
	return a.BuildHandle(name), nil
}

// CreateNew makes the sandbox only if its directory does not exist
// (mkdir is the atomic step) and mints an instance id.
func (a *Adapter) CreateNew(_ context.Context, name string, opts paddock.CreateNewOpts) (paddock.Handle, error) {
	if err := paddock.ValidateSandboxName(name); err != nil {
		return paddock.Handle{}, err
	}
	dir := a.dirOf(name)
	if err := a.makeDirs(dir, true); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return paddock.Handle{}, paddock.ErrAlreadyExists
		}
		return paddock.Handle{}, unavailable("create", err)
	}
	m := meta{Name: name, InstanceID: randomID("local-"), CreatedAt: time.Now().UTC(), Egress: egressNone, MaxAge: a.maxAge}
	if err := writeJSON(filepath.Join(dir, metaFile), m, true); err != nil {
		return paddock.Handle{}, unavailable("create", err)
	}
	if err := a.writeLease(name, opts.Lease); err != nil {
		return paddock.Handle{}, unavailable("create", err)
	}
	h := a.BuildHandle(name)
	h.InstanceID = m.InstanceID
	return h, nil
}

// makeDirs creates the sandbox directory and its fs and sessions
// directories; with exclusive an existing sandbox is fs.ErrExist.
func (a *Adapter) makeDirs(dir string, exclusive bool) error {
	if err := os.MkdirAll(a.root, 0o755); err != nil {
		return err
	}
	err := os.Mkdir(dir, 0o755)
	if err != nil && (exclusive || !errors.Is(err, fs.ErrExist)) {
		return err
	}
	for _, sub := range []string{fsDir, sessionsDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// readMeta reads a sandbox's metadata: ErrNotFound when it definitely does
// not exist; an unreadable root or file is unavailable, never not_found.
func (a *Adapter) readMeta(name string) (meta, error) {
	if _, err := os.Stat(a.root); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return meta{}, unavailable("reading the root", err)
	}
	b, err := os.ReadFile(filepath.Join(a.dirOf(name), metaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return meta{}, paddock.ErrNotFound
	}
	if err != nil {
		return meta{}, unavailable("reading metadata", err)
	}
	var m meta
	if err := json.Unmarshal(b, &m); err != nil || m.Name != name {
		return meta{}, &paddock.UnavailableError{Detail: "sandbox metadata unreadable"}
	}
	return m, nil
}

// Get reports the sandbox's name, status (suspended while stopped) and
// creation time, its instance id as ID when CreateNew made it (there is
// no image: commands run on the host), and in Raw its metadata and whether
// its commands are isolated.
func (a *Adapter) Get(_ context.Context, h paddock.Handle) (paddock.Info, error) {
	m, err := a.readMeta(h.Name)
	if err != nil {
		return paddock.Info{}, err
	}
	isolated, why := a.Isolated()
	raw, _ := json.Marshal(map[string]any{
		"name": m.Name, "instance_id": m.InstanceID, "created_at": m.CreatedAt, "egress": m.Egress,
		"isolated": isolated, "isolation_reason": why, "dir": a.dirOf(h.Name),
	})
	status := paddock.StatusRunning
	if m.Suspended {
		status = paddock.StatusSuspended
	}
	return paddock.Info{Name: m.Name, ID: m.InstanceID, Status: status, CreatedAt: m.CreatedAt, Raw: raw}, nil
}

// Destroy kills every process of the sandbox, waits until they are gone,
// and removes its directory; an absent sandbox is fine.
func (a *Adapter) Destroy(ctx context.Context, h paddock.Handle) error {
	dir := a.dirOf(h.Name)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	a.killSandbox(ctx, dir, "")
	trash := filepath.Join(a.root, trashPrefix+randomID(""))
	if err := os.Rename(dir, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return unavailable("destroy", err)
	}
	a.stopMachine(dir) // one a command started while the first was being stopped
	if err := os.RemoveAll(trash); err != nil {
		a.log.Warn().Err(err).Str("dir", trash).Msg("local: could not remove a destroyed sandbox's files")
	}
	return nil
}

// DestroyOnce destroys within opts.Timeout and succeeds only when the
// sandbox's directory is confirmed gone.
func (a *Adapter) DestroyOnce(ctx context.Context, h paddock.Handle, opts paddock.DestroyOnceOpts) error {
	ctx, cancel, err := opts.Bound(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Destroy(ctx, h) }()
	select {
	case <-ctx.Done():
		return &paddock.UnavailableError{Detail: paddock.DetailDeleteTimeout}
	case err := <-done:
		if err != nil {
			return &paddock.UnavailableError{Detail: paddock.DetailDeleteUnconfirmed}
		}
	}
	if _, err := os.Stat(a.dirOf(h.Name)); !errors.Is(err, fs.ErrNotExist) {
		return &paddock.UnavailableError{Detail: paddock.DetailDeleteUnconfirmed}
	}
	return nil
}

// ListAllNames reads every sandbox's metadata under the root.
func (a *Adapter) ListAllNames(context.Context) ([]string, error) {
	entries, err := os.ReadDir(a.root)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, unavailable("listing the root", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(a.root, e.Name(), metaFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue // being created or destroyed
		}
		var m meta
		if err != nil || json.Unmarshal(b, &m) != nil {
			return nil, &paddock.UnavailableError{Detail: "sandbox metadata unreadable in " + e.Name()}
		}
		names = append(names, m.Name)
	}
	sort.Strings(names)
	return names, nil
}

// Suspend stops every process of the sandbox (SIGSTOP) and records it.
func (a *Adapter) Suspend(_ context.Context, h paddock.Handle) error {
	return a.setSuspended(h.Name, true)
}

// Resume continues every process of the sandbox (SIGCONT).
func (a *Adapter) Resume(_ context.Context, h paddock.Handle) (paddock.Handle, error) {
	return h, a.setSuspended(h.Name, false)
}

func (a *Adapter) setSuspended(name string, suspended bool) error {
	m, err := a.readMeta(name)
	if err != nil {
		return err
	}
	sig := stubproc.SIGCONT
	if suspended {
		sig = stubproc.SIGSTOP
	}
	a.signalSandbox(a.dirOf(name), sig)
	m.Suspended = suspended
	if err := writeJSON(filepath.Join(a.dirOf(name), metaFile), m, true); err != nil {
		return unavailable("suspend", err)
	}
	return nil
}

// writeJSON writes v to path atomically; without clobber an existing file
// is fs.ErrExist and left as it was.
func writeJSON(path string, v any, clobber bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp-" + randomID("")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	defer os.Remove(tmp)
	if clobber {
		return os.Rename(tmp, path)
	}
	return os.Link(tmp, path)
}

// randomID returns prefix and 16 random hex digits.
func randomID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return prefix + hex.EncodeToString(b)
}

// unavailable wraps a host failure; it is transient, never not_found.
func unavailable(what string, err error) error {
	return &paddock.UnavailableError{Detail: what + ": " + err.Error()}
}

// ApplyNetworkPolicy makes p the sandbox's complete egress allow list, at
// once: connections to names it no longer allows are cut. It needs
// isolation, and a sandbox made without egress=unrestricted (whose
// network is the host's).
func (a *Adapter) ApplyNetworkPolicy(_ context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if err := a.requireIsolation(); err != nil {
		return err
	}
	if isolated, why := a.Isolated(); !isolated {
		return &paddock.InvalidError{Detail: paddock.DetailNetworkPolicy + ": enforced only in isolated sandboxes (" + why + ")"}
	}
	unlock := a.lockName("policy:" + a.dirOf(h.Name))
	defer unlock()
	m, err := a.readMeta(h.Name)
	if err != nil {
		return err
	}
	if m.Egress == egressUnrestricted {
		return &paddock.InvalidError{Detail: paddock.DetailNetworkPolicy + ": the sandbox was made with egress=unrestricted: it has the host's network"}
	}
	allow := append([]string{}, p.Allow...)
	m.Policy = &paddock.NetworkPolicy{Allow: allow}
	if err := writeJSON(filepath.Join(a.dirOf(h.Name), metaFile), m, true); err != nil {
		return unavailable("apply network policy", err)
	}
	a.mu.Lock()
	mc := a.machines[a.dirOf(h.Name)]
	a.mu.Unlock()
	if mc != nil && mc.gate != nil {
		mc.gate.SetPolicy(allow)
	}
	return nil
}
