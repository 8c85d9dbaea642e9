//go:build race

package heavy

// Race is true: this program was built with the race detector.
const Race = true
