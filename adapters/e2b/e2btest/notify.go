package e2btest

import "github.com/paddockhq/paddock/adapters/e2b/envd/filesystempb"

// change is one change a streaming watch reports: its name relative to
// the watched root.
type change struct {
	name string
	kind filesystempb.EventType
}
