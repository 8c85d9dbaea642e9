package actors

// Operations maps the full name of each declared request message to its
// operation's name, for the test that checks the declarations against the
// messages protocol.
func Operations() map[string]string {
	out := make(map[string]string, len(operations))
	for _, o := range operations {
		out[o.requestName()] = o.name()
	}
	return out
}

// ObserveHeartbeats reports each heartbeat tick's decision ("idle" or
// "sent") and each beat's end ("done"); call it before the first request.
func ObserveHeartbeats(rt *Runtime, f func(sandbox, event string)) { rt.observeBeat = f }

// LiveSinks counts the plain-Go streams the runtime holds a sink for.
func LiveSinks(rt *Runtime) int {
	n := 0
	rt.sinks.Range(func(any, any) bool { n++; return true })
	return n
}
