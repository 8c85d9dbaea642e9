package conformance

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
)

// Run runs every case of the suite against cfg.Adapter, each as a subtest
// of t named for the promise it checks. Capability gates are read once, when
// Run starts (except create_new, read when its case runs, as the contract
// says). Run is not parallel; every sandbox a case creates is destroyed
// when the case ends.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	run(subtests{t}, cfg)
}

// runner runs one named case; the seam lets the suite's own tests record
// outcomes instead of failing.
type runner interface {
	Run(name string, body func(t testing.TB))
}

// subtests runs each case as a subtest of a *testing.T.
type subtests struct{ t *testing.T }

func (s subtests) Run(name string, body func(t testing.TB)) {
	s.t.Run(name, func(t *testing.T) { body(t) })
}

// testCase is one promise of the contract.
type testCase struct {
	name string
	body func(t testing.TB, s *suite)
}

// run instantiates the suite and runs its cases through r.
func run(r runner, cfg Config) {
	s := newSuite(cfg)
	for _, c := range s.cases() {
		r.Run(c.name, func(t testing.TB) { c.body(t, s) })
	}
}

// suite is one instantiation: the config, and the capabilities read at
// instantiation.
type suite struct {
	cfg  Config
	a    paddock.Adapter
	caps paddock.CapabilitySet
	name func() string
}

func newSuite(cfg Config) *suite {
	cfg = cfg.withDefaults()
	s := &suite{cfg: cfg, a: cfg.Adapter, caps: cfg.Adapter.Capabilities(), name: cfg.Name}
	if s.name == nil {
		s.name = nameMinter()
	}
	return s
}

// nameMinter returns "conformance-<run>-<n>": the run part keeps names of
// separate runs against one account apart.
func nameMinter() func() string {
	run := strconv.FormatInt(time.Now().UnixNano()%(1<<40), 36)
	var n atomic.Uint64
	return func() string { return "conformance-" + run + "-" + strconv.FormatUint(n.Add(1), 10) }
}

// cases lists every case, in the contract's order, then this project's.
func (s *suite) cases() []testCase {
	cases := []testCase{
		{"01 BuildHandle is pure and tagged", buildHandleIsPure},
		{"02 capabilities are known", capabilitiesAreKnown},
		{"03 PublicURL agrees with the capability", publicURLAgrees},
		{"04 CreateNew refuses adoption and makes a new incarnation", createNewRefusesAdoption},
		{"05 Create is name-keyed and adopting", createAdopts},
		{"06 Get of a never-created name is not_found", getNeverCreated},
		{"07 Destroy tolerates absence and is definitive", destroyIsDefinitive},
		{"08 ListAllNames is a full set", listAllNames},
		{"09 Suspend and Resume are total", suspendResume},
		{"10 Exec returns output and exit 0", execOK},
		{"11 Exec nonzero exit is data", execFail},
		{"12 frames then exactly one terminal", spawnOneTerminal},
	}
	if s.cfg.Fixtures.SpawnDrop != nil {
		cases = append(cases, testCase{"13 close without exit is an error", spawnDropIsError})
	}
	cases = append(cases,
		testCase{"14 WriteStdin after exit is command_exited", writeAfterExit},
		testCase{"15 stdin round trip and EOF", stdinRoundTrip},
		testCase{"16 StopCommand is total", stopIsTotal},
		testCase{"17 Attach replays from the start then tails", s.gate(paddock.CapAttach, attachReplays, sessionsRefused)},
		testCase{"18 TerminateSession stops a detached session and keeps the sandbox", s.gate(paddock.CapTerminateSession, terminateKeepsSandbox, terminateRefused)},
		testCase{"18f force termination kills and is uncertain for an unknown id", s.gate(paddock.CapForceTerminateSession, forceTerminate, forceTerminateRefused)},
		testCase{"19 network policy follows the capability", s.gate(paddock.CapNetworkPolicy, policyAccepted, policyRefused)},
		testCase{"20 checkpoints follow the capability", s.gate(paddock.CapCheckpoint, checkpointWorks, checkpointRefused)},
		testCase{"21 files round trip, with parents and 4 MiB streamed", filesRoundTrip},
		testCase{"22 named spawn returns the live session", s.gate(paddock.CapNamedSpawn, namedSpawn, namedSpawnRefused)},
		testCase{"23 expose and revoke a preview", s.gate(paddock.CapExpose, exposeRevoke, exposeRefused)},
		testCase{"24 nothing lost under load", nothingLostUnderLoad},
		testCase{"25 DestroyOnce confirms absence", destroyOnceConfirmsAbsence},
		testCase{"26 CreateCheckpointOnce is listed", checkpointOnceIsListed},
		testCase{"27 Exec keeps stderr apart, or merges it", execSplitsOrMerges},
		testCase{"28 Exec holds at most its output cap", execOutputCap},
		testCase{"29 file operations list, describe, move and remove", s.gate(paddock.CapFiles, fileOperations, fileOperationsRefused)},
		testCase{"30 signals reach a live command", s.gate(paddock.CapSignal, signalsReachTheCommand, signalsRefused)},
		testCase{"31 a terminal starts at its size and resizes", s.gate(paddock.CapResize, terminalResizes, terminalResizeRefused)},
		testCase{"32 a watch reports a directory's changes in order", s.gate(paddock.CapWatch, watchReportsChanges, watchRefused)},
	)
	return cases
}

// gate picks a case body by whether c was advertised when the suite was
// instantiated: the promise when it was, the refusal when it was not.
func (s *suite) gate(c paddock.Capability, advertised, refused func(testing.TB, *suite)) func(testing.TB, *suite) {
	if s.caps.Has(c) {
		return advertised
	}
	return refused
}
