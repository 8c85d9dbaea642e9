package actors

// recent is a map that keeps only its max newest keys: the root's memory
// of finished commands and of answered stream openings.
type recent[K comparable, V any] struct {
	max   int
	m     map[K]V
	order []K // oldest first
}

func newRecent[K comparable, V any](max int) *recent[K, V] {
	return &recent[K, V]{max: max, m: map[K]V{}}
}

// put sets k's value; a new key is the newest, and the oldest beyond max
// are forgotten. A key already held keeps its place.
func (r *recent[K, V]) put(k K, v V) {
	if _, ok := r.m[k]; !ok {
		r.order = append(r.order, k)
	}
	r.m[k] = v
	for len(r.order) > r.max {
		delete(r.m, r.order[0])
		r.order = r.order[1:]
	}
}

// get is k's value, if k is still remembered.
func (r *recent[K, V]) get(k K) (V, bool) {
	v, ok := r.m[k]
	return v, ok
}

// update sets k's value only if k is still remembered.
func (r *recent[K, V]) update(k K, v V) {
	if _, ok := r.m[k]; ok {
		r.m[k] = v
	}
}
