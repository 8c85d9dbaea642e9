//go:build unix

package local

// unsupportedSystem is why the adapter cannot run here: "", it can.
const unsupportedSystem = ""
