package conformance

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// recorder is a runner that records each case's outcome instead of failing
// the enclosing test, so a test can prove the suite catches a broken
// adapter.
type recorder struct {
	parent  *testing.T
	results map[string]*recordingTB
	order   []string
}

func newRecorder(t *testing.T) *recorder {
	return &recorder{parent: t, results: map[string]*recordingTB{}}
}

// Run runs body on its own goroutine, as testing does, so that FailNow can
// end it with runtime.Goexit; cleanups run after it, each on its own
// goroutine.
func (r *recorder) Run(name string, body func(t testing.TB)) {
	rt := &recordingTB{TB: r.parent, name: name}
	r.results[name] = rt
	r.order = append(r.order, name)
	done := make(chan struct{})
	go func() {
		defer close(done)
		body(rt)
	}()
	<-done
	rt.runCleanups()
}

// failed lists the names of the failed cases.
func (r *recorder) failed() []string {
	var out []string
	for _, name := range r.order {
		if r.results[name].Failed() {
			out = append(out, name)
		}
	}
	return out
}

// recordingTB is a testing.TB that records failures. The embedded TB (the
// enclosing test) provides only what the suite never calls.
type recordingTB struct {
	testing.TB
	name string

	mu       sync.Mutex
	failed   bool
	logs     []string
	cleanups []func()
}

func (r *recordingTB) Name() string { return r.name }
func (r *recordingTB) Helper()      {}

func (r *recordingTB) Log(args ...any) { r.log(fmt.Sprintln(args...)) }
func (r *recordingTB) Logf(format string, args ...any) {
	r.log(fmt.Sprintf(format, args...))
}
func (r *recordingTB) Error(args ...any) { r.log(fmt.Sprintln(args...)); r.Fail() }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.log(fmt.Sprintf(format, args...))
	r.Fail()
}
func (r *recordingTB) Fatal(args ...any) { r.Error(args...); r.FailNow() }
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.FailNow()
}
func (r *recordingTB) Skip(args ...any) { r.Error(append([]any{"skipped:"}, args...)...); r.FailNow() }
func (r *recordingTB) Skipf(format string, args ...any) {
	r.Errorf("skipped: "+format, args...)
	r.FailNow()
}
func (r *recordingTB) SkipNow()      { r.Skip() }
func (r *recordingTB) Skipped() bool { return false }

func (r *recordingTB) Fail() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
}

func (r *recordingTB) FailNow() {
	r.Fail()
	runtime.Goexit()
}

func (r *recordingTB) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *recordingTB) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *recordingTB) log(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, s)
}

// runCleanups runs the cleanups last-in first-out, each on a goroutine of
// its own so that one calling FailNow does not stop the others.
func (r *recordingTB) runCleanups() {
	r.mu.Lock()
	fs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		done := make(chan struct{})
		go func() {
			defer close(done)
			fs[i]()
		}()
		<-done
	}
}
