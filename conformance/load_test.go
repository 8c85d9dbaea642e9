package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/fake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
