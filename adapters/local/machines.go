package local

import (
	"errors"

	"github.com/paddockhq/paddock"
)

// machineFor returns the machine of the sandbox described by m in sbDir,
// starting it on first use (or after its init ended).
func (a *Adapter) machineFor(sbDir string, m meta) (*machine, error) {
	a.mu.Lock()
	mc := a.machines[sbDir]
	closed := a.closed
	a.mu.Unlock()
	if closed {
		return nil, unavailable("start", errClosed)
	}
	if mc != nil && !mc.hasEnded() {
		return mc, nil
	}
	unlock := a.lockName("machine:" + sbDir)
	defer unlock()
	a.mu.Lock()
	mc = a.machines[sbDir]
	a.mu.Unlock()
	if mc != nil {
		if !mc.hasEnded() {
			return mc, nil
		}
		a.forgetMachine(mc)
		mc.close()
	}
	isolated, _ := a.Isolated()
	cfg := initConfig{Isolated: isolated}
	if isolated {
		cfg.Hostname, cfg.Loopback = hostname(m.Name), m.Egress != egressUnrestricted
		cfg.Egress = cfg.Loopback
		cfg.NProc, cfg.FSize = uint64(a.processLimit), uint64(a.fileLimit)
		if a.cgroups.pids != "" {
			cfg.NProc = 0 // the cgroup limits the sandbox alone, not the whole user
		}
	}
	cg, err := a.cgroups.newMachineCgroup(machineCgroupName(), a.processLimit)
	if err != nil {
		a.log.Warn().Err(err).Msg("local: no cgroup for this sandbox; its sessions are tracked by process group")
		cg = nil
	}
	cfg.Commands = cg.commandsProcs()
	mc, err = startMachine(sbDir, a.initProgram, cfg, cg)
	if err != nil {
		cg.remove()
		return nil, unavailable("starting the sandbox's init", err)
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		mc.close()
		return nil, unavailable("start", errClosed)
	}
	a.machines[sbDir] = mc
	a.mu.Unlock()
	if mc.egress != nil {
		a.serveEgress(mc, m.Name)
	}
	return mc, nil
}

// forgetMachine drops mc from the registry if it is still there.
func (a *Adapter) forgetMachine(mc *machine) {
	a.mu.Lock()
	if a.machines[mc.key] == mc {
		delete(a.machines, mc.key)
	}
	a.mu.Unlock()
}

// stopMachine ends the machine of the sandbox in sbDir, if this adapter
// runs one: every process of the sandbox is killed.
func (a *Adapter) stopMachine(sbDir string) {
	a.mu.Lock()
	mc := a.machines[sbDir]
	delete(a.machines, sbDir)
	a.mu.Unlock()
	if mc != nil {
		mc.close()
	}
}

// hasEnded reports a machine whose init is gone.
func (m *machine) hasEnded() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ended
}

// runIn starts spec in the sandbox's machine as command id. A machine that
// ended meanwhile (destroyed, or its init died) is replaced once.
func (a *Adapter) runIn(sbDir string, m meta, id string, spec startSpec) (*started, error) {
	for attempt := 0; ; attempt++ {
		mc, err := a.machineFor(sbDir, m)
		if err != nil {
			return nil, err
		}
		st, err := mc.run(id, spec)
		if errors.Is(err, errMachineGone) && attempt == 0 {
			if _, err := a.readMeta(m.Name); err != nil {
				return nil, err // destroyed meanwhile
			}
			continue
		}
		if err != nil {
			return nil, startError(err)
		}
		return st, nil
	}
}

// startError maps a start failure: the command's own fault is invalid.
func startError(err error) error {
	var invalid *paddock.InvalidError
	if errors.As(err, &invalid) {
		return err
	}
	if errors.Is(err, errStart) {
		return &paddock.InvalidError{Detail: paddock.DetailCommand + ": " + err.Error()}
	}
	return unavailable("start", err)
}
