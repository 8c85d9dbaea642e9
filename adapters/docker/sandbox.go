package docker

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/paddockhq/paddock"
)

// inspect reads a sandbox's container; one not made by Paddock is refused
// (never adopted).
func (a *Adapter) inspect(ctx context.Context, name string) (client.ContainerInspectResult, error) {
	res, err := a.engine.ContainerInspect(ctx, containerName(name), client.ContainerInspectOptions{})
	if err != nil {
		return res, engineError("inspect", err)
	}
	if res.Container.Config == nil || res.Container.Config.Labels[labelManaged] != "true" || res.Container.Config.Labels[labelName] != name {
		return res, &paddock.InvalidError{Detail: "docker: container " + containerName(name) + " was not made by Paddock for this name"}
	}
	return res, nil
}

// state is a container's engine state.
func state(res client.ContainerInspectResult) container.ContainerState {
	if res.Container.State == nil {
		return ""
	}
	return res.Container.State.Status
}

// resolveRuntime picks the runtime: runsc when asked (invalid if the
// engine lacks it), runc when asked, and for auto runsc if registered,
// else runc with a warning (once).
func (a *Adapter) resolveRuntime(ctx context.Context, want string) (string, error) {
	if want == RuntimeRunc {
		return RuntimeRunc, nil
	}
	has, err := a.hasRunsc(ctx)
	if err != nil {
		return "", err
	}
	switch {
	case has:
		return RuntimeRunsc, nil
	case want == RuntimeRunsc:
		return "", &paddock.InvalidError{Detail: "docker: runtime runsc (gVisor) was asked for and the engine does not have it"}
	}
	a.runtime.once.Do(func() {
		a.log.Warn().Msg("docker: the engine has no runsc (gVisor); sandboxes use runc, a weaker boundary")
	})
	return RuntimeRunc, nil
}

// hasRunsc reports whether the engine has the runsc runtime, asking it
// once per adapter (an engine learns runtimes only when it restarts).
func (a *Adapter) hasRunsc(ctx context.Context) (bool, error) {
	a.runtime.mu.Lock()
	defer a.runtime.mu.Unlock()
	if a.runtime.known {
		return a.runtime.runsc, nil
	}
	info, err := a.engine.Info(ctx, client.InfoOptions{})
	if err != nil {
		return false, engineError("info", err)
	}
	_, a.runtime.runsc = info.Info.Runtimes[RuntimeRunsc]
	a.runtime.known = true
	return a.runtime.runsc, nil
}

// Create makes the sandbox, or adopts it: an existing sandbox of that name
// is returned, started (or unpaused) if it is not running. Options apply
// only when the sandbox is first made. The creation is tried first (the
// common case costs no lookup); a taken name is adopted.
func (a *Adapter) Create(ctx context.Context, name string, opts paddock.CreateOpts) (paddock.Handle, error) {
	if err := paddock.ValidateSandboxName(name); err != nil {
		return paddock.Handle{}, err
	}
	s, err := a.resolveSpec(opts.Params)
	if err != nil {
		return paddock.Handle{}, err
	}
	s.lease = opts.Lease
	h, err := a.create(ctx, name, s)
	switch {
	case errors.Is(err, errNameTaken):
		return a.adopt(ctx, name, opts.Lease)
	case errors.Is(err, errNoImage):
		// The engine looks the image up before the name: an existing
		// sandbox whose image is gone is still adopted.
		if h, aerr := a.adopt(ctx, name, opts.Lease); aerr == nil || !errors.Is(aerr, paddock.ErrNotFound) {
			return h, aerr
		}
		return paddock.Handle{}, noImage(s.image)
	}
	return h, err
}

// noImage is the answer to a create whose image is not on the engine.
func noImage(image string) error {
	detail := "docker: image " + image + " is not on the engine (pull or import it first)"
	if image == DefaultImage {
		detail = "docker: image " + image + " is not on the engine: build it with `go run ./cmd/paddock-image` in the paddock repository"
	}
	return &paddock.InvalidError{Detail: detail}
}

// adopt returns the existing sandbox, running, held by lease (or by this
// adapter's owner when lease is zero).
func (a *Adapter) adopt(ctx context.Context, name string, lease paddock.Lease) (paddock.Handle, error) {
	res, err := a.inspect(ctx, name)
	if err != nil {
		return paddock.Handle{}, err
	}
	switch state(res) {
	case container.StateRunning:
	case container.StatePaused:
		if _, err := a.engine.ContainerUnpause(ctx, res.Container.ID, client.ContainerUnpauseOptions{}); err != nil {
			return paddock.Handle{}, engineError("unpause", err)
		}
	default:
		a.links.drop(name) // a relay of ours ended with the sandbox's stop
		if _, err := a.engine.ContainerStart(ctx, res.Container.ID, client.ContainerStartOptions{}); err != nil {
			return paddock.Handle{}, engineError("start", err)
		}
	}
	if err := a.ensureEgress(ctx, name, res.Container.ID); err != nil {
		return paddock.Handle{}, err
	}
	if res.Container.Config.Labels[labelOwner] != a.ownerOf(lease) || !lease.Until.IsZero() {
		a.claim(ctx, name, lease) // this runtime keeps it now: not an orphan of the old owner
	}
	h := a.BuildHandle(name)
	h.InstanceID = res.Container.ID
	return h, nil
}

// errNameTaken is create's answer when the container name exists (another
// caller won a race, or CreateNew met an existing sandbox).
var errNameTaken = errors.New("docker: the sandbox's container name is taken")

// errNoImage marks create's answer when the image is not on the engine.
var errNoImage = errors.New("docker: no such image")

// create makes and starts a new container and, the first time this
// adapter starts an image, checks the scratch space is writable by the
// sandbox user; a taken name is errNameTaken.
func (a *Adapter) create(ctx context.Context, name string, s spec) (paddock.Handle, error) {
	runtime, err := a.resolveRuntime(ctx, s.runtime)
	if err != nil {
		return paddock.Handle{}, err
	}
	cfg, host := a.containerConfig(name, s, runtime, time.Now())
	res, err := a.engine.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: host, Name: containerName(name)})
	switch {
	case cerrdefs.IsConflict(err):
		return paddock.Handle{}, errNameTaken
	case cerrdefs.IsNotFound(err): // the only thing create looks up is the image
		return paddock.Handle{}, errNoImage
	case err != nil:
		return paddock.Handle{}, engineError("create", err)
	}
	fail := func(err error) (paddock.Handle, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_, _ = a.engine.ContainerRemove(rctx, res.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		return paddock.Handle{}, err
	}
	if _, err := a.engine.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		return fail(engineError("start", err))
	}
	if _, checked := a.checkedImages.Load(s.image); !checked {
		out, err := a.run(ctx, name, execSpec{cmd: []string{"/bin/sh", "-c", scriptSelfCheck}}, nil)
		if err != nil {
			return fail(err)
		}
		if out.code != 0 {
			return fail(&paddock.InvalidError{Detail: "docker: image " + s.image + ": " + short(string(out.stderr)+string(out.stdout))})
		}
		a.checkedImages.Store(s.image, true)
	}
	if err := a.ensureEgress(ctx, name, res.ID); err != nil {
		return fail(err)
	}
	// Nothing to stamp: the creation time is the first activity, and the
	// first exec within stampEvery need not stamp either.
	a.stamps.mark(name, time.Now())
	h := a.BuildHandle(name)
	h.InstanceID = res.ID
	return h, nil
}

// CreateNew makes one creation attempt that never adopts: an existing name
// is already_exists; the handle carries the container id.
func (a *Adapter) CreateNew(ctx context.Context, name string, opts paddock.CreateNewOpts) (paddock.Handle, error) {
	opts, err := paddock.ValidateCreateNew(name, opts)
	if err != nil {
		return paddock.Handle{}, err
	}
	return a.createFresh(ctx, name, opts.Lease, *opts.Timeout, "")
}

// createFresh makes the sandbox name with the adapter's defaults, never
// adopting (a taken name is already_exists), within timeout; seed is a
// fork's checkpoint archive to mount ("" for none).
func (a *Adapter) createFresh(ctx context.Context, name string, lease paddock.Lease, timeout time.Duration, seed string) (paddock.Handle, error) {
	s, err := a.resolveSpec(nil)
	if err != nil {
		return paddock.Handle{}, err
	}
	s.lease, s.seed = lease, seed
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	h, err := a.create(ctx, name, s)
	switch {
	case err == nil:
		return h, nil
	case errors.Is(err, errNameTaken):
		return paddock.Handle{}, paddock.ErrAlreadyExists
	case errors.Is(err, errNoImage):
		return paddock.Handle{}, noImage(s.image)
	case ctx.Err() != nil:
		return paddock.Handle{}, &paddock.UnavailableError{Detail: paddock.DetailCreateTimeout}
	}
	return paddock.Handle{}, err
}

// statusOf maps an engine state: running and restarting are running;
// paused, exited and created are suspended (Resume or Create starts them
// again); anything else is unknown.
func statusOf(s container.ContainerState) paddock.Status {
	switch s {
	case container.StateRunning, container.StateRestarting:
		return paddock.StatusRunning
	case container.StatePaused, container.StateExited, container.StateCreated:
		return paddock.StatusSuspended
	}
	return paddock.StatusUnknown
}

// Get reports the sandbox's name, container id, image, status and creation
// time; Raw is the engine's inspect answer. Only definite absence is
// not_found.
func (a *Adapter) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	res, err := a.inspect(ctx, h.Name)
	if err != nil {
		return paddock.Info{}, err
	}
	info := paddock.Info{Name: h.Name, ID: res.Container.ID, Status: statusOf(state(res)), Raw: res.Raw}
	if res.Container.Config != nil {
		info.Image = res.Container.Config.Image
	}
	info.CreatedAt, _ = time.Parse(time.RFC3339Nano, res.Container.Created)
	return info, nil
}

// Destroy removes the sandbox and everything in it; absence is fine.
func (a *Adapter) Destroy(ctx context.Context, h paddock.Handle) error {
	if _, err := a.inspect(ctx, h.Name); err != nil {
		if errors.Is(err, paddock.ErrNotFound) {
			return nil
		}
		return err
	}
	_, err := a.remove(ctx, h.Name, containerName(h.Name))
	if err != nil && !cerrdefs.IsNotFound(err) {
		return engineError("remove", err)
	}
	return nil
}

// remove force-removes the sandbox's container (by name or id) while no
// exec of ours is starting in it: the engine can hang an exec start that
// races the removal of its container, and the removal with it.
func (a *Adapter) remove(ctx context.Context, sandbox, container string) (client.ContainerRemoveResult, error) {
	gate := a.execGate(sandbox)
	gate.Lock()
	defer gate.Unlock()
	defer a.links.drop(sandbox)
	return a.engine.ContainerRemove(ctx, container, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
}

// DestroyOnce makes one bounded removal and confirms absence with one
// inspect: only a definite not-found is success.
func (a *Adapter) DestroyOnce(ctx context.Context, h paddock.Handle, opts paddock.DestroyOnceOpts) error {
	ctx, cancel, err := opts.Bound(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	fail := func(detail string) error {
		if ctx.Err() != nil {
			return &paddock.UnavailableError{Detail: paddock.DetailDeleteTimeout}
		}
		return &paddock.UnavailableError{Detail: detail}
	}
	if _, err := a.inspect(ctx, h.Name); err != nil {
		if errors.Is(err, paddock.ErrNotFound) {
			return nil
		}
		if errors.Is(err, paddock.ErrInvalid) {
			return err
		}
		return fail(paddock.DetailDeleteTransportFailed)
	}
	if _, err := a.remove(ctx, h.Name, containerName(h.Name)); err != nil && !cerrdefs.IsNotFound(err) {
		return fail(paddock.DetailDeleteUnconfirmed)
	}
	_, err = a.engine.ContainerInspect(ctx, containerName(h.Name), client.ContainerInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	return fail(paddock.DetailDeleteUnconfirmed)
}

// ListAllNames lists every Paddock sandbox on the engine, running or not:
// one complete answer.
func (a *Adapter) ListAllNames(ctx context.Context) ([]string, error) {
	res, err := a.engine.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: client.Filters{}.Add("label", labelManaged+"=true")})
	if err != nil {
		return nil, engineError("list", err)
	}
	names := make([]string, 0, len(res.Items))
	for _, c := range res.Items {
		name := c.Labels[labelName]
		if name == "" || !hasName(c.Names, containerName(name)) {
			continue // a foreign container wearing our label
		}
		names = append(names, name)
	}
	return names, nil
}

func hasName(names []string, want string) bool {
	for _, n := range names {
		if strings.TrimPrefix(n, "/") == want {
			return true
		}
	}
	return false
}

// Suspend freezes every process of the sandbox (pause); it stays in
// memory and holds its scratch space.
func (a *Adapter) Suspend(ctx context.Context, h paddock.Handle) error {
	res, err := a.inspect(ctx, h.Name)
	if err != nil {
		return err
	}
	if state(res) != container.StateRunning {
		return nil // paused already, or stopped: nothing runs
	}
	gate := a.execGate(h.Name)
	gate.Lock() // no exec of ours is between create and start while it freezes
	defer gate.Unlock()
	_, err = a.engine.ContainerPause(ctx, res.Container.ID, client.ContainerPauseOptions{})
	return engineError("pause", err)
}

// execGate is a sandbox's exec gate. An exec started while its sandbox
// is being paused joins the frozen cgroup and stalls the engine (inspect,
// unpause, remove) for minutes, and one whose start races the sandbox's
// removal can hang the engine too, so each exec holds the gate shared
// from its creation until it runs, and Suspend, removals and the reaper's
// stops hold it alone. The gates are the process's, by engine and name:
// every adapter on the engine shares them (another's reaper reads each
// sandbox's state with an exec). Execs from other processes are not
// covered.
func (a *Adapter) execGate(name string) *sync.RWMutex {
	g, _ := execGates.LoadOrStore(gateKey{a.engine.DaemonHost(), name}, &sync.RWMutex{})
	return g.(*sync.RWMutex)
}

// execGates are the exec gates of this process's adapters.
var execGates sync.Map // gateKey -> *sync.RWMutex

// gateKey names a sandbox on an engine.
type gateKey struct{ engine, name string }

// Resume unpauses the sandbox, or starts it again if it was stopped (an
// idle stop loses the scratch space: tmpfs). When a pause raced exiting
// execs, the engine may still report the sandbox paused for a moment after
// Resume (it applies a queued paused event late, then the resumed one).
func (a *Adapter) Resume(ctx context.Context, h paddock.Handle) (paddock.Handle, error) {
	return a.adopt(ctx, h.Name, paddock.Lease{})
}

// ApplyNetworkPolicy makes p the sandbox's complete egress allow list, at
// once: connections to names it no longer allows are cut. It is kept with
// the sandbox (across stops) and enforced by this adapter from now on. A
// sandbox made with egress=unrestricted refuses it (it has a network of
// its own), as does an adapter whose image lacks the helpers.
func (a *Adapter) ApplyNetworkPolicy(ctx context.Context, h paddock.Handle, p paddock.NetworkPolicy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if !a.cfg.Helpers {
		return &paddock.InvalidError{Detail: paddock.DetailNetworkPolicy + ": docker enforces a policy only with the image's helpers (Config.Helpers)"}
	}
	res, err := a.inspect(ctx, h.Name)
	if err != nil {
		return err
	}
	if res.Container.Config != nil && !gatedEnv(res.Container.Config.Env) {
		return &paddock.InvalidError{Detail: paddock.DetailNetworkPolicy + ": the sandbox was made with egress=unrestricted: it has a network of its own"}
	}
	allow := append([]string{}, p.Allow...)
	unlock := a.links.lock(h.Name)
	defer unlock()
	if err := a.keepPolicy(ctx, res.Container.ID, allow); err != nil {
		return err
	}
	if l := a.links.get(h.Name); l != nil && l.gate != nil && !l.ended() && l.container == res.Container.ID {
		l.gate.SetPolicy(allow)
		return nil
	}
	if state(res) != container.StateRunning {
		return nil // enforced from the next start
	}
	a.links.drop(h.Name)
	return a.startRelay(ctx, h.Name)
}
