//go:build !race

package heavy

// Race is false: this program was built without the race detector.
const Race = false
