package actors

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// recent keeps its max newest keys; an update neither adds a key nor
// moves one, and putting a held key keeps its place.
func TestRecentKeepsTheNewest(t *testing.T) {
	t.Parallel()
	r := newRecent[string, int](2)
	r.put("a", 1)
	r.put("b", 2)
	r.put("a", 3) // held: keeps its place, oldest
	r.update("c", 9)
	r.put("c", 4) // forgets a
	r.update("b", 5)
	got := map[string]int{}
	for _, k := range []string{"a", "b", "c"} {
		if v, ok := r.get(k); ok {
			got[k] = v
		}
	}
	assert.Equal(t, map[string]int{"b": 5, "c": 4}, got)
	assert.Len(t, r.order, 2, "what is forgotten leaves the order too")
}
