package conformance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/fake"
	"github.com/paddockhq/paddock/internal/heavy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The load case through the runtime hands its turns' streams to channel
// owners and actor owners in turn, and each kind reads its command whole.
func TestTheLoadCaseMixesBothKindsOfOwner(t *testing.T) {
	t.Parallel()
	a := fake.New()
	rt, err := actors.Start(actors.Config{Adapters: paddock.Registry{paddock.ProviderFake: a}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, rt.Shutdown(ctx))
		a.Reset()
	})
	view := rt.Adapter(paddock.ProviderFake)
	mixed := &mixedOwners{Client: view, owned: client.New(actorOwners{Transport: rt.Transport(), rt: rt}, paddock.ProviderFake)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := view.Create(ctx, "mixed", paddock.CreateOpts{})
	require.NoError(t, err)
	bulk := FakeFixtures().SpawnBulk
	actorOwnedStreams := 0
	for range 4 {
		st, err := mixed.Spawn(ctx, h, bulk.Cmd, paddock.SpawnOpts{})
		require.NoError(t, err)
		if _, ok := st.(*ownedStream); ok {
			actorOwnedStreams++
		}
		require.NoError(t, readWhole(ctx, st, bulk.Output))
		require.NoError(t, st.Close())
	}
	assert.Equal(t, 2, actorOwnedStreams, "every other stream is an actor's")
}

// neverEnds swallows the terminal event and then waits for the caller to
// give up, as a stream whose end is never read would.
func neverEnds(st paddock.Stream) paddock.Stream {
	return &streamFunc{Stream: st, next: func(ctx context.Context) (paddock.Event, error) {
		ev, err := st.Next(ctx)
		if err == nil && ev.Kind.Terminal() {
			<-ctx.Done()
			return paddock.Event{}, ctx.Err()
		}
		return ev, err
	}}
}

func TestRunLoadEndsWithTheRunsContext(t *testing.T) {
	t.Parallel()
	f := fake.New()
	b := &broken{Adapter: f, spawnStream: neverEnds}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	report := RunLoad(ctx, b, FakeFixtures(), paddock.SpawnOpts{}, 20, nil)
	assert.Equal(t, 20, report.Failed, "every turn failed")
	assert.Empty(t, report.Latencies)
	require.NotEmpty(t, report.Failures)
	assert.Contains(t, report.Failures[0], "no terminal event")
	assert.Empty(t, report.LeftBehind, "each turn destroys its sandbox even when it fails")
}

func TestRunLoadReportsEveryFailureCountButListsTheFirst(t *testing.T) {
	t.Parallel()
	b := &broken{Adapter: fake.New(), exec: cutLongOutput, keepOnDestroy: true}
	report := RunLoad(context.Background(), b, FakeFixtures(), paddock.SpawnOpts{}, 50, nil)
	assert.Equal(t, 50, report.Failed)
	assert.Len(t, report.Failures, maxReported)
	assert.Contains(t, report.Failures[0], "exec: exit 0 with 1024 bytes (first difference at byte 1024); want exit 0 with 13893 bytes")
	assert.Len(t, report.LeftBehind, 50)
	assert.Contains(t, report.String(), "50 turns, 50 failed, 50 sandboxes left behind")
}

func TestTheLoadCaseNeedsBulkFixtures(t *testing.T) {
	t.Parallel()
	f := FakeFixtures()
	f.ExecBulk = BulkFixture{}
	rec := newRecorder(t)
	s := newSuite(Config{Adapter: fake.New(), Fixtures: f})
	rec.Run("24", func(tb testing.TB) { nothingLostUnderLoad(tb, s) })
	assert.Equal(t, []string{"24"}, rec.failed())
}

func TestLoadReportFigures(t *testing.T) {
	t.Parallel()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	r := LoadReport{Turns: 5, Elapsed: 2 * time.Second, Latencies: []time.Duration{ms(10), ms(20), ms(30), ms(40), ms(50)}}
	for p, want := range map[float64]time.Duration{0: ms(10), 0.5: ms(30), 0.99: ms(40), 1: ms(50)} {
		assert.Equal(t, want, r.Percentile(p), "p%v", p*100)
	}
	assert.InDelta(t, 2.5, r.TurnsPerSecond(), 1e-9)
	assert.Zero(t, LoadReport{}.Percentile(0.5))
	assert.Zero(t, LoadReport{}.TurnsPerSecond())
}

// broken wraps the fake and breaks one promise at a time.
type broken struct {
	*fake.Adapter
	spawnStream   func(paddock.Stream) paddock.Stream // wraps every spawned stream
	attachStream  func(paddock.Stream) paddock.Stream // wraps every attached stream
	get           func(error) error                   // rewrites Get's error
	exec          func(paddock.ExecResult) paddock.ExecResult
	execOpts      func(paddock.ExecOpts) paddock.ExecOpts // rewrites Exec's options
	keepOnDestroy bool                                    // Destroy answers ok and removes nothing
	listed        func(paddock.Session) paddock.Session   // rewrites each listed session
}

func (b *broken) ListSessions(ctx context.Context, h paddock.Handle) ([]paddock.Session, error) {
	list, err := b.Adapter.ListSessions(ctx, h)
	for i := range list {
		if b.listed != nil {
			list[i] = b.listed(list[i])
		}
	}
	return list, err
}

func (b *broken) Exec(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.ExecOpts) (paddock.ExecResult, error) {
	if b.execOpts != nil {
		o = b.execOpts(o)
	}
	res, err := b.Adapter.Exec(ctx, h, cmd, o)
	if err == nil && b.exec != nil {
		res = b.exec(res)
	}
	return res, err
}

func (b *broken) Destroy(ctx context.Context, h paddock.Handle) error {
	if b.keepOnDestroy {
		return nil
	}
	return b.Adapter.Destroy(ctx, h)
}

func (b *broken) Spawn(ctx context.Context, h paddock.Handle, cmd paddock.Cmd, o paddock.SpawnOpts) (paddock.Stream, error) {
	st, err := b.Adapter.Spawn(ctx, h, cmd, o)
	if err != nil || b.spawnStream == nil {
		return st, err
	}
	return b.spawnStream(st), nil
}

func (b *broken) Attach(ctx context.Context, h paddock.Handle, id string, o paddock.AttachOpts) (paddock.Stream, error) {
	st, err := b.Adapter.Attach(ctx, h, id, o)
	if err != nil || b.attachStream == nil {
		return st, err
	}
	return b.attachStream(st), nil
}

func (b *broken) Get(ctx context.Context, h paddock.Handle) (paddock.Info, error) {
	info, err := b.Adapter.Get(ctx, h)
	if b.get != nil {
		err = b.get(err)
	}
	return info, err
}

// streamFunc overrides a stream's Next and WriteStdin.
type streamFunc struct {
	paddock.Stream
	next  func(ctx context.Context) (paddock.Event, error)
	write func(ctx context.Context, p []byte) error
}

func (s *streamFunc) Next(ctx context.Context) (paddock.Event, error) {
	if s.next != nil {
		return s.next(ctx)
	}
	return s.Stream.Next(ctx)
}

func (s *streamFunc) WriteStdin(ctx context.Context, p []byte) error {
	if s.write != nil {
		return s.write(ctx, p)
	}
	return s.Stream.WriteStdin(ctx, p)
}

// secondExit sends another exit after the first instead of ending.
func secondExit(st paddock.Stream) paddock.Stream {
	exited := false
	return &streamFunc{Stream: st, next: func(ctx context.Context) (paddock.Event, error) {
		if exited {
			return paddock.Exit(0), nil
		}
		ev, err := st.Next(ctx)
		exited = err == nil && ev.Kind == paddock.EventExit
		return ev, err
	}}
}

// dropAsExit turns a close without an exit into a made-up exit 0.
func dropAsExit(st paddock.Stream) paddock.Stream {
	return &streamFunc{Stream: st, next: func(ctx context.Context) (paddock.Event, error) {
		ev, err := st.Next(ctx)
		if err == nil && ev.Kind == paddock.EventError {
			return paddock.Exit(0), nil
		}
		return ev, err
	}}
}

// skipFirstChunk loses the first event of the replay.
func skipFirstChunk(st paddock.Stream) paddock.Stream {
	skipped := false
	return &streamFunc{Stream: st, next: func(ctx context.Context) (paddock.Event, error) {
		if !skipped {
			skipped = true
			if _, err := st.Next(ctx); err != nil {
				return paddock.Event{}, err
			}
		}
		return st.Next(ctx)
	}}
}

// loseThirdChunk drops the third stdout event, as a reader cut short
// under load would.
func loseThirdChunk(st paddock.Stream) paddock.Stream {
	n := 0
	return &streamFunc{Stream: st, next: func(ctx context.Context) (paddock.Event, error) {
		ev, err := st.Next(ctx)
		if err == nil && ev.Kind == paddock.EventStdout {
			if n++; n == 3 {
				return st.Next(ctx)
			}
		}
		return ev, err
	}}
}

// cutLongOutput keeps only the first KiB of a longer exec output.
func cutLongOutput(res paddock.ExecResult) paddock.ExecResult {
	res.Stdout = res.Stdout[:min(len(res.Stdout), 1024)]
	return res
}

// stdinAlwaysOK answers every stdin write with success, even after exit.
func stdinAlwaysOK(st paddock.Stream) paddock.Stream {
	return &streamFunc{Stream: st, write: func(ctx context.Context, p []byte) error {
		if err := st.WriteStdin(ctx, p); err != nil && !errors.Is(err, paddock.ErrCommandExited) {
			return err
		}
		return nil
	}}
}

func TestTheSuiteCatchesBrokenAdapters(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		breakIt  func(b *broken)
		caughtBy []string // cases that must fail
	}{
		"a second exit": {
			breakIt:  func(b *broken) { b.spawnStream = secondExit },
			caughtBy: []string{"12 frames then exactly one terminal", "15 stdin round trip and EOF", "18f force termination kills and is uncertain for an unknown id", "24 nothing lost under load"},
		},
		"a stream losing its third chunk": {
			breakIt:  func(b *broken) { b.spawnStream = loseThirdChunk },
			caughtBy: []string{"24 nothing lost under load"},
		},
		"exec cutting a long output": {
			breakIt:  func(b *broken) { b.exec = cutLongOutput },
			caughtBy: []string{"24 nothing lost under load", "28 Exec holds at most its output cap"},
		},
		"exec dropping stderr": {
			breakIt: func(b *broken) {
				b.exec = func(r paddock.ExecResult) paddock.ExecResult { r.Stderr = nil; return r }
			},
			caughtBy: []string{"27 Exec keeps stderr apart, or merges it"},
		},
		"exec ignoring the output cap": {
			breakIt:  func(b *broken) { b.execOpts = func(o paddock.ExecOpts) paddock.ExecOpts { o.MaxOutput = 0; return o } },
			caughtBy: []string{"28 Exec holds at most its output cap"},
		},
		"destroy leaving the sandbox": {
			breakIt:  func(b *broken) { b.keepOnDestroy = true },
			caughtBy: []string{"04 CreateNew refuses adoption and makes a new incarnation", "07 Destroy tolerates absence and is definitive", "24 nothing lost under load"},
		},
		"a drop turned into exit 0": {
			breakIt: func(b *broken) { b.spawnStream = dropAsExit },
			// The listing, which tells the recorded end, then disagrees
			// with the exit the subscriber got.
			caughtBy: []string{"13 close without exit is an error", "35 a listed session says whether it runs and how it ended"},
		},
		"a listing that says every session runs": {
			breakIt: func(b *broken) {
				b.listed = func(s paddock.Session) paddock.Session {
					return paddock.Session{ID: s.ID, Name: s.Name, Command: s.Command, State: paddock.SessionRunning}
				}
			},
			caughtBy: []string{"35 a listed session says whether it runs and how it ended"},
		},
		"a listing that calls a failed session exited": {
			breakIt: func(b *broken) {
				b.listed = func(s paddock.Session) paddock.Session {
					if s.State == paddock.SessionFailed {
						s.Ended(paddock.Exit(0))
					}
					return s
				}
			},
			caughtBy: []string{"35 a listed session says whether it runs and how it ended"},
		},
		"attach skipping the first chunk": {
			breakIt:  func(b *broken) { b.attachStream = skipFirstChunk },
			caughtBy: []string{"17 Attach replays from the start then tails"},
		},
		"get answering unavailable for a missing sandbox": {
			breakIt: func(b *broken) {
				b.get = func(err error) error {
					if errors.Is(err, paddock.ErrNotFound) {
						return &paddock.UnavailableError{Detail: "http", Status: 503}
					}
					return err
				}
			},
			caughtBy: []string{"06 Get of a never-created name is not_found", "07 Destroy tolerates absence and is definitive"},
		},
		"stdin writes after exit answered ok": {
			breakIt:  func(b *broken) { b.spawnStream = stdinAlwaysOK },
			caughtBy: []string{"14 WriteStdin after exit is command_exited", "16 StopCommand is total"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := fake.New()
			t.Cleanup(f.Reset)
			b := &broken{Adapter: f}
			tc.breakIt(b)
			rec := newRecorder(t)
			run(rec, Config{Adapter: b, Fixtures: FakeFixtures()})
			assert.ElementsMatch(t, tc.caughtBy, rec.failed(), "exactly the right cases catch it")
			for _, c := range tc.caughtBy {
				require.Contains(t, rec.results, c)
				assert.NotEmpty(t, rec.results[c].logs, "%s says why it failed", c)
			}
		})
	}
}

func TestTheSuitePassesTheFakeThroughTheRecorder(t *testing.T) {
	t.Parallel()
	// The control: the recorder itself reports no failure for a correct
	// adapter, so the failures above come from the breakage alone.
	f := fake.New()
	t.Cleanup(f.Reset)
	rec := newRecorder(t)
	run(rec, Config{Adapter: f, Fixtures: FakeFixtures()})
	assert.Empty(t, rec.failed())
	assert.Len(t, rec.order, 36) // 34 needs real programs, 36 checkpoints: the fake has neither
}

// requiredOnly shows only the required operations of the adapter it wraps,
// while still advertising every capability of it.
type requiredOnly struct{ paddock.Adapter }

func TestTheSuiteCatchesCapabilitiesWithoutTheirOperations(t *testing.T) {
	t.Parallel()
	f := fake.New()
	t.Cleanup(f.Reset)
	rec := newRecorder(t)
	run(rec, Config{Adapter: requiredOnly{f}, Fixtures: FakeFixtures()})
	assert.ElementsMatch(t, []string{
		"03 PublicURL agrees with the capability",
		"04 CreateNew refuses adoption and makes a new incarnation",
		"18 TerminateSession stops a detached session and keeps the sandbox",
		"18f force termination kills and is uncertain for an unknown id",
		"19 network policy follows the capability",
		"23 expose and revoke a preview",
		"29 file operations list, describe, move and remove",
		"32 a watch reports a directory's changes in order",
	}, rec.failed(), "every advertised capability whose interface is missing is caught")
}

func TestCasesRunsOnlyTheCasesItNumbers(t *testing.T) {
	t.Parallel()
	f := fake.New()
	t.Cleanup(f.Reset)
	rec := newRecorder(t)
	run(rec, Config{Adapter: f, Fixtures: FakeFixtures(), Cases: []string{"26", "18f", "20"}})
	assert.Equal(t, []string{
		"18f force termination kills and is uncertain for an unknown id",
		"20 checkpoints follow the capability",
		"26 CreateCheckpointOnce is listed",
	}, rec.order, "in the suite's order")
	assert.Empty(t, rec.failed())

	rec = newRecorder(t)
	run(rec, Config{Adapter: f, Fixtures: FakeFixtures(), Cases: []string{"20", "24", "26"}, Except: []string{"24"}})
	assert.Equal(t, []string{"20 checkpoints follow the capability", "26 CreateCheckpointOnce is listed"}, rec.order,
		"Except leaves out what Cases selects")
}

// CasesEnv narrows every run to its cases, within what the run's own
// Cases and Except select; LoadTurnsEnv sizes the load case outright.
func TestTheEnvironmentNarrowsAndSizesEveryRun(t *testing.T) {
	t.Setenv(CasesEnv, "20,24,18f")
	t.Setenv(LoadTurnsEnv, "7")
	f := fake.New()
	t.Cleanup(f.Reset)
	rec := newRecorder(t)
	run(rec, Config{Adapter: f, Fixtures: FakeFixtures(), Cases: []string{"20", "24", "26"}, Except: []string{"24"}})
	assert.Equal(t, []string{"20 checkpoints follow the capability"}, rec.order)
	assert.Equal(t, 7, Config{Load: Load{Turns: 300}}.withDefaults().Load.Turns)
}

// The load case runs its full size, or an eighth of it built with the race
// detector (CI runs it at full size without).
func TestTheLoadCaseIsSmallerUnderTheRaceDetector(t *testing.T) {
	t.Parallel()
	want := map[bool][2]int{false: {DefaultLoadTurns, 200}, true: {DefaultLoadTurns / 8, 25}}[heavy.Race]
	assert.Equal(t, want[0], Config{}.withDefaults().Load.Turns)
	assert.Equal(t, want[1], Config{Load: Load{Turns: 200}}.withDefaults().Load.Turns)
}

// The pass with actor owners runs the cases about streams, but the load
// case, which the channel pass runs with both kinds of owner.
func TestStreamsOnlyRunsTheCasesAboutStreams(t *testing.T) {
	t.Parallel()
	f := fake.New()
	t.Cleanup(f.Reset)
	rec := newRecorder(t)
	run(rec, Config{Adapter: f, Fixtures: FakeFixtures(), streamsOnly: true})
	assert.Equal(t, []string{
		"12 frames then exactly one terminal",
		"13 close without exit is an error",
		"14 WriteStdin after exit is command_exited",
		"15 stdin round trip and EOF",
		"16 StopCommand is total",
		"17 Attach replays from the start then tails",
		"18 TerminateSession stops a detached session and keeps the sandbox",
		"18f force termination kills and is uncertain for an unknown id",
		"22 named spawn returns the live session",
		"30 signals reach a live command",
		"31 a terminal starts at its size and resizes",
		"32 a watch reports a directory's changes in order",
		"35 a listed session says whether it runs and how it ended",
	}, rec.order)
	assert.Empty(t, rec.failed())
}
