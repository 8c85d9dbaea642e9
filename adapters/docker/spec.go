package docker

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/adapters/internal/reaping"
)

// Paths inside every sandbox.
const (
	scratchTmp = "/tmp"         // scratch, half the disk budget
	workspace  = "/workspace"   // scratch and the working directory, the other half
	stateDir   = "/run/paddock" // root-owned: the activity stamp the sandbox cannot forge
	stampFile  = stateDir + "/last-used"
	stateSize  = 64 << 10
	// sessionBase holds the session journals, on the scratch space.
	sessionBase = scratchTmp + "/.paddock"
	// seedArchive is where a fork's checkpoint is mounted (read-only).
	seedArchive = stateDir + "/fork.tar"
)

// limits are a sandbox's resources.
type limits struct {
	CPUs         float64
	MemoryMB     int64
	DiskMB       int64
	MaxProcesses int64
}

// check validates the limits: all positive, and no more disk (tmpfs,
// which is memory) than memory.
func (l limits) check() (limits, error) {
	switch {
	case l.CPUs <= 0 || l.MemoryMB <= 0 || l.DiskMB <= 0 || l.MaxProcesses <= 0:
		return l, &paddock.InvalidError{Detail: paddock.DetailCreateOptions + ": limits must be positive"}
	case l.DiskMB > l.MemoryMB:
		return l, &paddock.InvalidError{Detail: paddock.DetailCreateOptions + ": disk_mb above memory_mb (scratch is tmpfs, drawn from memory)"}
	}
	return l, nil
}

// spec is everything a sandbox is created with.
type spec struct {
	image         string
	runtime       string
	limits        limits
	egress        bool // unrestricted egress (a bridge network); default: loopback only
	execWorkspace bool // /workspace allows executing files written there
	idle, maxAge  time.Duration
	lease         paddock.Lease // recorded in labels at creation; zero = this adapter's owner, no expiry
	seed          string        // a fork's checkpoint archive on this machine, mounted read-only at seedArchive; "" = none
}

// Creation parameters (CreateOpts.Params), each overriding the adapter's
// default for one sandbox.
var createParams = []string{"image", "runtime", "cpus", "memory_mb", "disk_mb", "max_processes",
	"egress", "exec_workspace", "idle_timeout", "max_age"}

// resolveSpec reads the creation parameters over the adapter's defaults;
// any unknown key or bad value is invalid(create_options).
func (a *Adapter) resolveSpec(params map[string]string) (spec, error) {
	s := spec{image: a.cfg.Image, runtime: a.cfg.Runtime, idle: a.cfg.IdleTimeout, maxAge: a.cfg.MaxAge,
		limits: limits{CPUs: a.cfg.CPUs, MemoryMB: a.cfg.MemoryMB, DiskMB: a.cfg.DiskMB, MaxProcesses: a.cfg.MaxProcesses}}
	bad := func(k, why string) error {
		return &paddock.InvalidError{Detail: paddock.DetailCreateOptions + ": " + k + " " + why}
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := params[k]
		var err error
		switch k {
		case "image":
			if v == "" {
				return s, bad(k, "is empty")
			}
			s.image = v
		case "runtime":
			if v != RuntimeRunsc && v != RuntimeRunc {
				return s, bad(k, "is runsc or runc")
			}
			s.runtime = v
		case "cpus":
			s.limits.CPUs, err = strconv.ParseFloat(v, 64)
		case "memory_mb":
			s.limits.MemoryMB, err = strconv.ParseInt(v, 10, 64)
		case "disk_mb":
			s.limits.DiskMB, err = strconv.ParseInt(v, 10, 64)
		case "max_processes":
			s.limits.MaxProcesses, err = strconv.ParseInt(v, 10, 64)
		case "egress":
			if v != "none" && v != "unrestricted" {
				return s, bad(k, "is none or unrestricted")
			}
			s.egress = v == "unrestricted"
		case "exec_workspace":
			s.execWorkspace, err = strconv.ParseBool(v)
		case "idle_timeout":
			s.idle, err = time.ParseDuration(v)
		case "max_age":
			s.maxAge, err = time.ParseDuration(v)
		default:
			return s, bad(strconv.Quote(k), "is not a parameter (known: "+strings.Join(createParams, ", ")+")")
		}
		if err != nil {
			return s, bad(k, "is malformed: "+strconv.Quote(v))
		}
	}
	var err error
	s.limits, err = s.limits.check()
	return s, err
}

// tmpfsOwner is the mount options giving the scratch mounts to the
// sandbox user (numeric uid[:gid]). Where the image already has /tmp or
// /workspace, the runtime gives the mount that directory's mode (a
// Debian /tmp stays 1777; an image's /workspace is often root's 0755),
// so the sandbox user must own the mount to write in it.
func tmpfsOwner(user string) string {
	uid, gid, hasGID := strings.Cut(user, ":")
	opts := ",uid=" + uid
	if hasGID {
		opts += ",gid=" + gid
	}
	return opts
}

// containerConfig is the hardened container for s: read-only root, no
// capabilities, no privilege gain, the non-root user, CPU, memory (no
// swap) and process limits, tmpfs scratch drawn from the memory budget,
// loopback only unless egress was asked, an init reaping orphans, and
// identity in labels.
func (a *Adapter) containerConfig(name string, s spec, runtime string, created time.Time) (*container.Config, *container.HostConfig) {
	half := s.limits.DiskMB << 20 / 2
	workspaceOpts := "rw,nosuid,nodev,noexec"
	if s.execWorkspace {
		workspaceOpts = "rw,nosuid,nodev,exec"
	}
	memory := s.limits.MemoryMB << 20
	pids := s.limits.MaxProcesses
	init := true
	owner := tmpfsOwner(a.cfg.User)
	cfg := &container.Config{
		Image: s.image,
		User:  a.cfg.User,
		// No WorkingDir: the engine would create /workspace in the root
		// filesystem, and the tmpfs mounted there would then keep that
		// directory's owner and mode (root, 0755). Each exec sets it.
		Entrypoint: []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"},
		// Home is the workspace: the image's home directories are on the
		// read-only root, and the sandbox user may have none there.
		Env: []string{"HOME=" + workspace},
		Labels: map[string]string{
			labelManaged: "true", labelName: name, labelCreatedAt: created.UTC().Format(time.RFC3339Nano),
			labelIdleTimeout: s.idle.String(), labelMaxAge: s.maxAge.String(), labelOwner: a.ownerOf(s.lease),
		},
	}
	if !s.lease.Until.IsZero() {
		cfg.Labels[labelLeaseUntil] = reaping.FormatTime(s.lease.Until)
	}
	host := &container.HostConfig{
		Runtime:        runtime,
		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		NetworkMode:    "none",
		RestartPolicy:  container.RestartPolicy{Name: container.RestartPolicyDisabled},
		Init:           &init,
		Tmpfs: map[string]string{
			scratchTmp: "rw,nosuid,nodev,noexec,size=" + strconv.FormatInt(half, 10) + ",mode=1777" + owner,
			workspace:  workspaceOpts + ",size=" + strconv.FormatInt(half, 10) + ",mode=0777" + owner,
			stateDir:   "rw,nosuid,nodev,noexec,size=" + strconv.Itoa(stateSize) + ",mode=0755",
		},
	}
	host.NanoCPUs = int64(s.limits.CPUs * 1e9)
	host.Memory = memory
	host.MemorySwap = memory // no swap on top of the memory limit
	host.PidsLimit = &pids
	switch {
	case s.egress:
		host.NetworkMode = "bridge"
	case a.cfg.Helpers: // out by the proxy only (egress.go)
		cfg.Env = append(cfg.Env, egressEnv...)
		host.Mounts = []mount.Mount{{Type: mount.TypeVolume, Target: policyDir}}
	}
	if s.seed != "" {
		host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeBind, Source: s.seed, Target: seedArchive, ReadOnly: true})
	}
	return cfg, host
}
