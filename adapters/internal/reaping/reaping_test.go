package reaping

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEachBoundsItsWidth(t *testing.T) {
	t.Parallel()
	var in, most atomic.Int32
	names := make([]string, 40)
	for i := range names {
		names[i] = string(rune('a' + i))
	}
	release := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Each(context.Background(), len(names), 3, func(context.Context, int) error {
			n := in.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			<-release
			in.Add(-1)
			return nil
		})
	}()
	require.Eventually(t, func() bool { return in.Load() == 3 }, time.Minute, time.Millisecond)
	close(release)
	require.NoError(t, <-done)
	assert.Equal(t, int32(3), most.Load())
}

func TestEachJoinsErrorsAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	err := Each(context.Background(), 2, 2, func(_ context.Context, i int) error {
		if i == 1 {
			return errors.New("b failed")
		}
		return nil
	})
	require.ErrorContains(t, err, "b failed")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ran atomic.Int32
	err = Each(ctx, 3, 1, func(context.Context, int) error { ran.Add(1); return nil })
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, ran.Load())
}

func TestRenew(t *testing.T) {
	t.Parallel()
	all := []string{"a", "b", "c", "d"}
	var mu sync.Mutex
	var claimed []string
	walk := func(_ context.Context, visit func(string)) error {
		for _, n := range all {
			visit(n)
		}
		return nil
	}
	name := func(n string) string {
		if n == "b" {
			return "" // keeps no lease
		}
		return n
	}
	err := Renew(context.Background(), walk, name, []string{"c", "gone", "a", "b", "d"}, 2,
		func(_ context.Context, n string) error {
			mu.Lock()
			defer mu.Unlock()
			claimed = append(claimed, n)
			if n == "d" {
				return paddock.ErrNotFound // went meanwhile
			}
			return nil
		})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "c", "d"}, claimed, "listed and named: claimed; named but not listed, or keeping no lease: skipped")

	failed := errors.New("walk failed")
	err = Renew(context.Background(), func(context.Context, func(string)) error { return failed }, name, all, 2,
		func(context.Context, string) error { return nil })
	require.ErrorIs(t, err, failed, "a walk's failure is the renewal's")
	err = Renew(context.Background(), walk, name, all, 2, func(_ context.Context, n string) error {
		return &paddock.UnavailableError{Detail: n}
	})
	require.ErrorIs(t, err, paddock.ErrUnavailable, "any other claim failure is reported")
}

func TestLabelsRoundTripAndKeepTheOthers(t *testing.T) {
	t.Parallel()
	until := time.Date(2026, 12, 3, 15, 0, 0, 123, time.UTC)
	held := paddock.Lease{Owner: "rt-1", Until: until}
	cases := []struct {
		name   string
		in     map[string]string
		lease  paddock.Lease
		maxAge time.Duration
		want   map[string]string
	}{
		{"a new lease and age", map[string]string{"team": "a"}, held, time.Hour,
			map[string]string{"team": "a", LabelOwner: "rt-1", LabelLeaseUntil: FormatTime(until), LabelMaxAge: "1h0m0s"}},
		{"a renewal keeps the age", map[string]string{LabelOwner: "old", LabelLeaseUntil: "x", LabelMaxAge: "2h0m0s"}, held, 0,
			map[string]string{LabelOwner: "rt-1", LabelLeaseUntil: FormatTime(until), LabelMaxAge: "2h0m0s"}},
		{"a zero lease drops the lease", map[string]string{LabelOwner: "old", LabelLeaseUntil: "x", "team": "a"}, paddock.Lease{}, 0,
			map[string]string{"team": "a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Labels(tc.in, tc.lease, tc.maxAge)
			require.Equal(t, tc.want, got)
			lease, _ := FromLabels(got)
			assert.Equal(t, tc.lease.Owner, lease.Owner)
			assert.True(t, tc.lease.Until.Equal(lease.Until), "until %v read back as %v", tc.lease.Until, lease.Until)
		})
	}
	_, age := FromLabels(map[string]string{LabelMaxAge: "90m"})
	assert.Equal(t, 90*time.Minute, age)
}
