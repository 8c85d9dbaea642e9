package fake

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/internal/watchq"
)

// Capabilities is what the fake advertises by default: the reference set of
// the contract's capabilities (docs/contract.md#fake) plus named spawn,
// expose and files.
func Capabilities() paddock.CapabilitySet {
	return paddock.NewCapabilitySet(
		paddock.CapSuspend, paddock.CapNetworkPolicy, paddock.CapAttach, paddock.CapPublicURL,
		paddock.CapTerminateSession, paddock.CapForceTerminateSession, paddock.CapCreateNew,
		paddock.CapNamedSpawn, paddock.CapExpose, paddock.CapFiles, paddock.CapWatch,
	)
}

// Adapter is the reference fake: an in-memory world of sandboxes whose
// commands are scripts (see the package doc). Each New is its own world;
// the zero value is not usable.
type Adapter struct {
	caps paddock.CapabilitySet
	now  func() time.Time

	mu           sync.Mutex
	sandboxes    map[string]*sandbox
	nextInstance uint64
	nextSession  uint64
	previews     map[string]preview // by token
}

// sandbox is one fake sandbox's state.
type sandbox struct {
	name       string
	status     paddock.Status
	instanceID string
	createdAt  time.Time
	files      map[string]file
	dirs       map[string]dir // every directory but "/", made explicitly or as a parent
	policy     *paddock.NetworkPolicy
	sessions   map[string]*session
	watchers   map[*watchq.Queue]string // each watch's directory
}

// file is one stored file.
type file struct {
	data    []byte
	mode    uint32
	modTime time.Time
}

// dir is one directory.
type dir struct {
	mode    uint32
	modTime time.Time
}

// Option configures New.
type Option func(*Adapter)

// WithCapabilities replaces the advertised capabilities (default
// Capabilities()), to exercise a caller's gating.
func WithCapabilities(caps paddock.CapabilitySet) Option {
	return func(a *Adapter) { a.caps = caps }
}

// WithClock sets the time source of session timestamps and preview expiry
// (default time.Now).
func WithClock(now func() time.Time) Option { return func(a *Adapter) { a.now = now } }

// New returns an empty fake world.
func New(opts ...Option) *Adapter {
	a := &Adapter{caps: Capabilities(), now: time.Now}
	for _, o := range opts {
		o(a)
	}
	a.sandboxes = map[string]*sandbox{}
	a.previews = map[string]preview{}
	return a
}

// Each role file states the optional interface it implements.
var (
	_ paddock.Adapter       = (*Adapter)(nil)
	_ paddock.CreateNewer   = (*Adapter)(nil)
	_ paddock.PolicyApplier = (*Adapter)(nil)
	_ paddock.PublicURLer   = (*Adapter)(nil)
)

// Provider returns "fake".
func (a *Adapter) Provider() paddock.Provider { return paddock.ProviderFake }

// Capabilities returns the advertised set.
func (a *Adapter) Capabilities() paddock.CapabilitySet { return a.caps }

// BuildHandle returns {fake, name}.
func (a *Adapter) BuildHandle(name string) paddock.Handle {
	return paddock.Handle{Provider: paddock.ProviderFake, Name: name}
}

// Create inserts an empty running sandbox unless name exists, in which case
// it is adopted untouched. It returns a plain built handle. The fake reads
// no creation parameter: any is invalid (create_options), as with every
// adapter's unknown keys.
func (a *Adapter) Create(_ context.Context, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	if err := paddock.ValidateSandboxName(name); err != nil {
		return paddock.Handle{}, err
	}
	for k := range opts.Params {
		return paddock.Handle{}, &paddock.InvalidError{Detail: paddock.DetailCreateOptions + ": the fake takes no parameter, got " + strconv.Quote(k)}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.sandboxes[name]; !ok {
		a.sandboxes[name] = newSandbox(name)
	}
	return a.BuildHandle(name), nil
}

// CreateNew inserts a sandbox and mints its instance id "fake-<n>", or
// answers ErrAlreadyExists leaving the existing one untouched.
func (a *Adapter) CreateNew(_ context.Context, name string, _ paddock.CreateNewOpts) (paddock.Handle, error) {
	if err := paddock.ValidateSandboxName(name); err != nil {
		return paddock.Handle{}, err
	}
	if err := paddock.Require(a, paddock.CapCreateNew); err != nil {
		return paddock.Handle{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.sandboxes[name]; ok {
		return paddock.Handle{}, paddock.ErrAlreadyExists
	}
	a.nextInstance++
	sb := newSandbox(name)
	sb.instanceID = "fake-" + strconv.FormatUint(a.nextInstance, 10)
	a.sandboxes[name] = sb
	h := a.BuildHandle(name)
	h.InstanceID = sb.instanceID
	return h, nil
}

func newSandbox(name string) *sandbox {
	return &sandbox{name: name, status: paddock.StatusRunning, createdAt: time.Now().UTC(), files: map[string]file{}, dirs: map[string]dir{}, sessions: map[string]*session{}}
}

// lock locks the adapter and finds h's sandbox; on an error the adapter
// is left unlocked.
func (a *Adapter) lock(h paddock.Handle) (*sandbox, error) {
	a.mu.Lock()
	sb, err := a.lookup(h.Name)
	if err != nil {
		a.mu.Unlock()
	}
	return sb, err
}

// lookup returns the named sandbox or ErrNotFound. The caller holds a.mu.
func (a *Adapter) lookup(name string) (*sandbox, error) {
	sb, ok := a.sandboxes[name]
	if !ok {
		return nil, paddock.ErrNotFound
	}
	return sb, nil
}

// Get reports the name, the status, the creation time and, for a sandbox
// made by CreateNew, its instance id as ID (there is no image); Raw is
// {"name","id"} for such a sandbox and {} otherwise.
func (a *Adapter) Get(_ context.Context, h paddock.Handle) (paddock.Info, error) {
	sb, err := a.lock(h)
	if err != nil {
		return paddock.Info{}, err
	}
	defer a.mu.Unlock()
	raw := map[string]string{}
	if sb.instanceID != "" {
		raw = map[string]string{"name": sb.name, "id": sb.instanceID}
	}
	b, _ := json.Marshal(raw) // a map of strings always encodes
	return paddock.Info{Name: sb.name, ID: sb.instanceID, Status: sb.status, CreatedAt: sb.createdAt, Raw: b}, nil
}

// Destroy removes the sandbox (absent is fine). Its live commands are
// stopped and each of their subscribers receives one
// Error{closed_before_exit}: their fate is unknown, never success.
func (a *Adapter) Destroy(_ context.Context, h paddock.Handle) error {
	a.mu.Lock()
	sb, ok := a.sandboxes[h.Name]
	delete(a.sandboxes, h.Name)
	if ok {
		sb.endWatches()
	}
	a.mu.Unlock()
	if ok {
		stopAll(sb)
	}
	return nil
}

// stopAll stops every session of sb with closed_before_exit.
func stopAll(sb *sandbox) {
	for _, s := range sb.sessions {
		s.stop(paddock.Failed(&paddock.UnavailableError{Detail: paddock.DetailClosedBeforeExit}))
	}
}

// ListAllNames returns every sandbox name, sorted.
func (a *Adapter) ListAllNames(context.Context) ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	names := make([]string, 0, len(a.sandboxes))
	for n := range a.sandboxes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// Suspend marks the sandbox suspended; ErrNotFound when absent.
func (a *Adapter) Suspend(_ context.Context, h paddock.Handle) error {
	return a.setStatus(h, paddock.StatusSuspended)
}

// Resume marks the sandbox running and returns the same handle.
func (a *Adapter) Resume(_ context.Context, h paddock.Handle) (paddock.Handle, error) {
	return h, a.setStatus(h, paddock.StatusRunning)
}

func (a *Adapter) setStatus(h paddock.Handle, s paddock.Status) error {
	sb, err := a.lock(h)
	if err != nil {
		return err
	}
	defer a.mu.Unlock()
	sb.status = s
	return nil
}

// PublicURL returns https://<name>.fake.test (the facade answers
// ErrNoPublicURL while public_url is not in the fake's capabilities).
func (a *Adapter) PublicURL(_ context.Context, h paddock.Handle) (string, error) {
	if _, err := a.lock(h); err != nil {
		return "", err
	}
	defer a.mu.Unlock()
	return "https://" + h.Name + ".fake.test", nil
}

// ApplyNetworkPolicy records the policy verbatim (an empty allow list stays
// empty, a nil one nil).
func (a *Adapter) ApplyNetworkPolicy(_ context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	sb, err := a.lock(h)
	if err != nil {
		return err
	}
	defer a.mu.Unlock()
	stored := paddock.NetworkPolicy{}
	if p.Allow != nil {
		stored.Allow = append([]string{}, p.Allow...)
	}
	sb.policy = &stored
	return nil
}
