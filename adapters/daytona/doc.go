// Package daytona is the adapter for Daytona (daytona.io): the control
// plane by REST at the API URL, and each sandbox's toolbox daemon through
// the per-sandbox proxy URL the control plane names. See
// adapters/daytona/daytonatest for a loopback Daytona to test against.
//
// A checkpoint is a Daytona snapshot of the sandbox (checkpoints.go):
// files only, kept beyond the sandbox. Daytona restores nothing in place,
// so a restore makes the sandbox again from the snapshot under its name;
// a fork makes one under a new name.
package daytona
