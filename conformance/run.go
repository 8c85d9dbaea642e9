package conformance

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"strings"
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
	// streams: the promise is about a stream (spawn, attach, watch), so
	// who owns the stream matters to it.
	streams bool
}

// run instantiates the suite and runs its cases through r: those
// cfg.Cases selects, and only stream cases other than the load case when
// cfg.streamsOnly.
func run(r runner, cfg Config) {
	s := newSuite(cfg)
	for _, c := range s.cases() {
		if !s.cfg.selects(c.name) || s.cfg.streamsOnly && (!c.streams || c.name == loadCaseName) {
			continue
		}
		r.Run(c.name, func(t testing.TB) { c.body(t, s) })
	}
}

// LoadCase is the number of the load case, for Cases and Except: leave it
// out of an adapter's raw run when RunRuntime runs it, since the runtime
// calls every operation of the adapter the way the raw case does.
const LoadCase = "24"

// loadCaseName is the load case's name.
const loadCaseName = LoadCase + " nothing lost under load"

// selects reports whether the case named name runs: its number (the
// name's first word) is in Cases, or Cases is empty, and in CasesEnv's
// list when that is set, and not in Except.
func (c Config) selects(name string) bool {
	number, _, _ := strings.Cut(name, " ")
	listed := func(list []string) bool { return len(list) == 0 || slices.Contains(list, number) }
	return listed(c.Cases) && listed(c.envCases) && !slices.Contains(c.Except, number)
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
		{"01 BuildHandle is pure and tagged", buildHandleIsPure, false},
		{"02 capabilities are known", capabilitiesAreKnown, false},
		{"03 PublicURL agrees with the capability", publicURLAgrees, false},
		{"04 CreateNew refuses adoption and makes a new incarnation", createNewRefusesAdoption, false},
		{"05 Create is name-keyed and adopting", createAdopts, false},
		{"06 Get of a never-created name is not_found", getNeverCreated, false},
		{"07 Destroy tolerates absence and is definitive", destroyIsDefinitive, false},
		{"08 ListAllNames is a full set", listAllNames, false},
		{"09 Suspend and Resume are total", suspendResume, false},
		{"10 Exec returns output and exit 0", execOK, false},
		{"11 Exec nonzero exit is data", execFail, false},
		{"12 frames then exactly one terminal", spawnOneTerminal, true},
	}
	if s.cfg.Fixtures.SpawnDrop != nil {
		cases = append(cases, testCase{"13 close without exit is an error", spawnDropIsError, true})
	}
	cases = append(cases,
		testCase{"14 WriteStdin after exit is command_exited", writeAfterExit, true},
		testCase{"15 stdin round trip and EOF", stdinRoundTrip, true},
		testCase{"16 StopCommand is total", stopIsTotal, true},
		testCase{"17 Attach replays from the start then tails", s.gate(paddock.CapAttach, attachReplays, sessionsRefused), true},
		testCase{"18 TerminateSession stops a detached session and keeps the sandbox", s.gate(paddock.CapTerminateSession, terminateKeepsSandbox, terminateRefused), true},
		testCase{"18f force termination kills and is uncertain for an unknown id", s.gate(paddock.CapForceTerminateSession, forceTerminate, forceTerminateRefused), true},
		testCase{"19 network policy follows the capability", s.gate(paddock.CapNetworkPolicy, policyAccepted, policyRefused), false},
		testCase{"20 checkpoints follow the capability", s.gate(paddock.CapCheckpoint, checkpointWorks, checkpointRefused), false},
		testCase{"21 files round trip, with parents and 4 MiB streamed", filesRoundTrip, false},
		testCase{"22 named spawn returns the live session", s.gate(paddock.CapNamedSpawn, namedSpawn, namedSpawnRefused), true},
		testCase{"23 expose and revoke a preview", s.gate(paddock.CapExpose, exposeRevoke, exposeRefused), false},
		testCase{loadCaseName, nothingLostUnderLoad, true},
		testCase{"25 DestroyOnce confirms absence", destroyOnceConfirmsAbsence, false},
		testCase{"26 CreateCheckpointOnce is listed", checkpointOnceIsListed, false},
		testCase{"27 Exec keeps stderr apart, or merges it", execSplitsOrMerges, false},
		testCase{"28 Exec holds at most its output cap", execOutputCap, false},
		testCase{"29 file operations list, describe, move and remove", s.gate(paddock.CapFiles, fileOperations, fileOperationsRefused), false},
		testCase{"30 signals reach a live command", s.gate(paddock.CapSignal, signalsReachTheCommand, signalsRefused), true},
		testCase{"31 a terminal starts at its size and resizes", s.gate(paddock.CapResize, terminalResizes, terminalResizeRefused), true},
		testCase{"32 a watch reports a directory's changes in order", s.gate(paddock.CapWatch, watchReportsChanges, watchRefused), true},
		testCase{"33 a write cut midway leaves the file as it was", writeIsAllOrNothing, false},
	)
	if s.caps.Has(paddock.CapAttach) {
		cases = append(cases, testCase{"35 a listed session says whether it runs and how it ended", sessionsSayHowTheyEnded, true})
	}
	if s.cfg.Fixtures.Programs {
		cases = append(cases, testCase{"34 a program that cannot run exits 127 or 126, the reason on stderr", programsThatCannotRun, true})
	}
	if s.caps.Has(paddock.CapCheckpoint) {
		cases = append(cases, testCase{"36 a restore brings the files back exactly and stops the commands", restoreIsExact, true})
	}
	cases = append(cases, testCase{"37 a fork holds the checkpoint and is its own", s.gate(paddock.CapFork, forkIsItsOwn, forkRefused), false})
	if s.caps.Has(paddock.CapTTY) && s.caps.Has(paddock.CapAttach) {
		cases = append(cases, testCase{"38 a detachable terminal attaches again, or is refused", terminalReattaches, true})
	}
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

// Live describes a run of the suite against a real service: it runs only
// when the credential's environment variable is set, and skips with a
// message that names every variable it reads otherwise.
type Live struct {
	// Credential is the environment variable holding the service's
	// credential (an API key or token).
	Credential string
	// Optional are the other variables the adapter reads, for the skip
	// message.
	Optional []string
	// TurnsEnv sizes the load case (default Turns: an account allows few
	// sandboxes at a time).
	TurnsEnv string
	Turns    int
	// Adapter makes the adapter under test from the credential.
	Adapter func(credential string) (paddock.Adapter, error)
	// SpawnOptions are merged into every spawn, as in Config.
	SpawnOptions paddock.SpawnOpts
	// Configure, if set, changes the configuration last (a fixture of the
	// adapter's own, say).
	Configure func(*Config)
}

// LiveCredential is the credential in the environment variable env, for
// a test against the real service; without one the test is skipped,
// naming env and the optional variables that also steer it.
func LiveCredential(t testing.TB, env string, optional ...string) string {
	t.Helper()
	credential := os.Getenv(env)
	if credential == "" {
		t.Skipf("live test skipped: set %s (and optionally %s) to run it against the real service", env, strings.Join(optional, ", "))
	}
	return credential
}

// RunLive runs the suite against the service l describes, with sandboxes
// named paddock-live-<run>-<n> and the patience a real service needs, or
// skips t when the credential is not set.
func RunLive(t *testing.T, l Live) {
	t.Helper()
	credential := LiveCredential(t, l.Credential, append(l.Optional, l.TurnsEnv)...)
	turns := l.Turns
	if v, err := strconv.Atoi(os.Getenv(l.TurnsEnv)); err == nil && v > 0 {
		turns = v
	}
	run := make([]byte, 3)
	_, _ = rand.Read(run)
	var n atomic.Int64
	a, err := l.Adapter(credential)
	if err != nil {
		t.Fatalf("live test: the adapter: %v", err)
	}
	cfg := Config{
		Adapter:  a,
		Fixtures: ShellFixtures(),
		Name: func() string {
			return "paddock-live-" + hex.EncodeToString(run) + "-" + strconv.FormatInt(n.Add(1), 10)
		},
		SpawnOptions:     l.SpawnOptions,
		FrameTimeout:     60 * time.Second,
		OperationTimeout: 3 * time.Minute,
		Load:             Load{Turns: turns, Timeout: 15 * time.Minute},
	}
	if l.Configure != nil {
		l.Configure(&cfg)
	}
	Run(t, cfg)
}
