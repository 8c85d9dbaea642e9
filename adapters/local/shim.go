package local

import (
	"os"
	"path/filepath"
)

// The parts of the isolation shim the adapter side needs on every platform;
// the shim itself is in shim_linux.go.
const (
	shimEnv       = "PADDOCK_LOCAL_SHIM"
	shimConfigEnv = "PADDOCK_LOCAL_SHIM_CONFIG"
	shimStatusFD  = 3
	// exitShimFailed is the shim's exit code when it could not start the
	// command; the reason went to the status pipe.
	exitShimFailed = 126
)

// shimConfig is what the adapter tells the shim.
type shimConfig struct {
	Argv     []string `json:"argv"`
	Env      []string `json:"env"`
	Dir      string   `json:"dir"`
	Hostname string   `json:"hostname"`
	Loopback bool     `json:"loopback"` // a network namespace: bring lo up
	NProc    uint64   `json:"nproc"`    // RLIMIT_NPROC, 0 = leave
	FSize    uint64   `json:"fsize"`    // RLIMIT_FSIZE, 0 = leave
	Cgroup   string   `json:"cgroup"`   // cgroup.procs file to join, "" = none
	TTY      bool     `json:"tty"`
}

// shimStatus is the shim's one report on the status pipe.
type shimStatus struct {
	Error string `json:"error,omitempty"`
}

// envValue returns the last value of key in an environment list.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if len(kv) > len(key) && kv[:len(key)] == key && kv[len(key)] == '=' {
			v = kv[len(key)+1:]
		}
	}
	return v
}

// shimExecutable is the binary to re-execute as the shim.
func shimExecutable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}
