package paddock_test

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock"
	"github.com/stretchr/testify/assert"
)

func TestLeaseLapsed(t *testing.T) {
	t.Parallel()
	now := time.Now()
	cases := []struct {
		name         string
		lease        paddock.Lease
		zero, lapsed bool
	}{
		{"no lease", paddock.Lease{}, true, false},
		{"live", paddock.Lease{Owner: "a", Until: now.Add(time.Second)}, false, false},
		{"lapsed", paddock.Lease{Owner: "a", Until: now.Add(-time.Second)}, false, true},
		{"an owner without an end", paddock.Lease{Owner: "a"}, false, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.zero, c.lease.IsZero(), c.name)
		assert.Equal(t, c.lapsed, c.lease.Lapsed(now), c.name)
	}
}
