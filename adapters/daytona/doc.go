// Package daytona is the adapter for Daytona (daytona.io): the control
// plane by REST at the API URL, and each sandbox's toolbox daemon through
// the per-sandbox proxy URL the control plane names. See
// adapters/daytona/daytonatest for a loopback Daytona to test against.
package daytona
