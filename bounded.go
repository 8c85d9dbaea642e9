package paddock

import "time"

// Duration returns a pointer to d, for option fields where nil means "use the
// default" and a pointer to zero is an explicit (often invalid) zero.
func Duration(d time.Duration) *time.Duration { return &d }

// resolveBounded applies the contract's rule for a bounded timeout option:
// absent (nil) takes def; present must be a whole number of milliseconds in
// [1ms, max]. The second result is false when the value is out of bounds.
func resolveBounded(d *time.Duration, def, max time.Duration) (time.Duration, bool) {
	if d == nil {
		return def, true
	}
	v := *d
	if v < time.Millisecond || v > max || v%time.Millisecond != 0 {
		return 0, false
	}
	return v, true
}
